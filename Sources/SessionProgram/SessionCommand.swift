import ArgumentParser
import HandoffClient
import HandoffDesktop
import HandoffCore
import HandoffSystem
import HandoffControlAPI
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The session agent: run by handoff-session.service inside the graphical session.

struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff-session",
        abstract: "handoff's desktop side: opens continued activities in their apps, shows what other workstations offer (tray, notifications, search).",
        discussion: """
            A client of handoffd's local API (Docs/Apps.md). It takes the launcher role, so that \
            `handoffctl continue` opens the app that handles an activity (from the X-Handoff-ActivityTypes key \
            of desktop entries), or its web page in the app claiming the domain (X-Handoff-Domains) or the default \
            browser. On the session bus it owns org.handoff.Session: a tray icon (StatusNotifierItem) whose \
            menu continues what your other workstations offer, GNOME Shell's and KRunner's search, and the \
            presence (org.handoff.Presence1) that shells and panels render (Docs/Desktop.md). Settings: \
            ~/.config/handoff/handoff-session.conf (notifications = yes|no, tray = yes|no, \
            handler.TYPE = DESKTOP-ID).
            """,
        version: APIVersion.software)

    @Option(help: ArgumentHelp("handoffd's control socket (default: $HANDOFF_SOCKET, else $XDG_RUNTIME_DIR/handoff/handoffd.sock).", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("Settings file (default: ~/.config/handoff/handoff-session.conf).", valueName: "path"))
    var config: String?

    @Flag(name: .customLong("no-notifications"), help: "Show no notifications, whatever the settings say.")
    var noNotifications = false

    @Flag(name: .customLong("no-media"), help: "Do not offer what media players play (MPRIS), whatever the settings say.")
    var noMedia = false

    @Flag(help: "Ask the session agent that runs (D-Bus starts it if need be) to continue the newest offer, as a left click on its tray icon does, then exit.")
    var activate = false

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (default: info).")
    var logLevel: String = "info"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical") }
    }

    func run() async throws {
        if activate {
            do { try PresenceBus.activateRunningAgent() } catch {
                var text = "handoff-session: \(error); is the session agent running? systemctl --user start handoff-session\n"
                text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
                throw ExitCode.failure
            }
            return
        }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = level
            return h
        }
        var settings = SessionAgent.Settings(configPath: config ?? DefaultPaths.sessionConfigFile, userApplications: DefaultPaths.userApplications,
                                             documentCache: DefaultPaths.cacheDirectory + "/handoff/documents")
        settings.notificationsAllowed = !noNotifications
        settings.mediaAllowed = !noMedia
        let agent = SessionAgent(client: HandoffClient(socketPath: socket), settings: settings, logger: Logger(label: "handoff-session"))
        try await agent.run()
    }
}
