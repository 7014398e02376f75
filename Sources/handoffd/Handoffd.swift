import ArgumentParser
import HandoffDaemon
import HandoffCore
import HandoffSystem
import HandoffControlAPI
import Logging
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// handoffd: the per-user Handoff daemon. All behaviour lives in HandoffDaemon.
struct Handoffd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoffd",
        abstract: "The per-user Handoff daemon: keeps this workstation's current activity and serves it to the user's apps and other workstations.",
        discussion: "Settings come from $XDG_CONFIG_HOME/handoff/handoffd.conf (~/.config/handoff/handoffd.conf; key = value lines, keys as the long options below) and then from these options, which win.",
        version: APIVersion.software)

    @Option(help: "This device's name, as other workstations show it (default: the host name).")
    var name: String?

    @Option(name: .customLong("state-dir"), help: "Where durable state lives (default: $XDG_STATE_HOME/handoff).")
    var stateDir: String?

    @Option(help: "The control socket's path (default: $XDG_RUNTIME_DIR/handoff/handoffd.sock).")
    var socket: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (default: info).")
    var logLevel: String?

    @Option(help: "A config file to read instead of the default one.")
    var config: String?

    @Option(name: .customLong("max-activity-bytes"), help: "Cap on an encoded activity (default: 65536).")
    var maxActivityBytes: Int?

    @Option(name: .customLong("history-days"), help: "How many days the searchable activity history keeps what it saw; 0 keeps none (default: 30).")
    var historyDays: Int?

    @Option(name: .customLong("unowned-expiry-minutes"), help: "Activities made without an owning session (handoffctl become-current without --attach, scripts) expire after this unless they set their own expiry; 0: never (default: 720).")
    var unownedExpiryMinutes: Int?

    @Option(name: .customLong("will-save-timeout-ms"), help: "How long a fresh snapshot waits for the owner's save (default: 500).")
    var willSaveTimeoutMs: Int?

    @Option(name: .customLong("max-connections"), help: "Open control connections at once (default: 64).")
    var maxConnections: Int?

    @Option(name: .customLong("request-timeout-ms"), help: "A control request must arrive whole within this (default: 10000).")
    var requestTimeoutMs: Int?

    @Option(name: .customLong("idle-timeout-ms"), help: "Idle control connections are closed after this (default: 60000).")
    var idleTimeoutMs: Int?

    @Option(name: .customLong("peer-listen"), help: "The address peers connect to (default: :: = every address).")
    var peerListen: String?

    @Option(name: .customLong("peer-port"), help: "The peer port; 0 picks a free one, advertised over mDNS (default: 0).")
    var peerPort: Int?

    @Option(name: .customLong("peer-handshake-timeout-ms"), help: "A peer must finish TLS and the hello within this (default: 5000).")
    var peerHandshakeTimeoutMs: Int?

    @Option(name: .customLong("peer-max-unauthenticated"), help: "Peer connections that have not said hello yet, in all (default: 32).")
    var peerMaxUnauthenticated: Int?

    @Option(name: .customLong("peer-max-unauthenticated-per-address"), help: "Peer connections not past the hello from one address (default: 8).")
    var peerMaxUnauthenticatedPerAddress: Int?

    @Option(name: .customLong("stream-accept-timeout-ms"), help: "An app asked for a continuation stream must take it within this (default: 10000).")
    var streamAcceptTimeoutMs: Int?

    @Option(name: .customLong("max-streams-per-peer"), help: "Continuation streams open with one peer at once, each way (default: 8).")
    var maxStreamsPerPeer: Int?

    @Option(name: .customLong("peer"), help: ArgumentHelp("A peer to dial at HOST:PORT whatever mDNS says (repeatable).", valueName: "host:port"))
    var peers: [String] = []

    @Option(name: .customLong("dns-sd-domain"), help: ArgumentHelp("Also look for peers in this unicast DNS-SD domain, through Avahi's wide-area support (repeatable).", valueName: "domain"))
    var dnsSDDomains: [String] = []

    @Option(name: .customLong("advertisement-rotation-seconds"), help: ArgumentHelp("Seconds between new random advertisement names (default: 900).", visibility: .hidden))
    var advertisementRotationSeconds: Int?

    @Flag(name: .customLong("no-discovery"), help: "Do not advertise or browse with Avahi.")
    var noDiscovery = false

    func run() async throws {
        var cfg = DaemonConfiguration()
        do {
            let path = config ?? DefaultPaths.configFile
            if let text = try readConfig(path, required: config != nil) { try cfg.apply(configFile: text, path: path) }
            let flags: [(String, String?)] = [
                ("name", name), ("state-dir", stateDir), ("socket", socket), ("log-level", logLevel),
                ("max-activity-bytes", maxActivityBytes.map(String.init)),
                ("will-save-timeout-ms", willSaveTimeoutMs.map(String.init)),
                ("unowned-expiry-minutes", unownedExpiryMinutes.map(String.init)),
                ("history-days", historyDays.map(String.init)),
                ("max-connections", maxConnections.map(String.init)),
                ("request-timeout-ms", requestTimeoutMs.map(String.init)),
                ("idle-timeout-ms", idleTimeoutMs.map(String.init)),
                ("peer-listen", peerListen), ("peer-port", peerPort.map(String.init)),
                ("discovery", noDiscovery ? "no" : nil),
                ("peer-handshake-timeout-ms", peerHandshakeTimeoutMs.map(String.init)),
                ("peer-max-unauthenticated", peerMaxUnauthenticated.map(String.init)),
                ("peer-max-unauthenticated-per-address", peerMaxUnauthenticatedPerAddress.map(String.init)),
                ("stream-accept-timeout-ms", streamAcceptTimeoutMs.map(String.init)),
                ("max-streams-per-peer", maxStreamsPerPeer.map(String.init)),
                ("advertisement-rotation-seconds", advertisementRotationSeconds.map(String.init)),
            ]
            for case let (key, value?) in flags { try cfg.set(key, value) }
            for p in peers { try cfg.set("peer", p) }
            for d in dnsSDDomains { try cfg.set("dns-sd-domain", d) }
        } catch {
            throw ValidationError("\(error)")
        }
        let level = cfg.logLevel
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: level) }
        let logger = Logger(label: "handoffd")
        do {
            try await Daemon(configuration: cfg, logger: logger).run()
        } catch let e as ControlListener.AlreadyRunning {
            logger.error("\(e.description)")
            throw ExitCode(1)
        } catch {
            logger.critical("handoffd failed: \(error)")
            throw ExitCode(1)
        }
    }

    private func readConfig(_ path: String, required: Bool) throws -> String? {
        guard let bytes = try BoundedFile.read(path, limit: 1 << 20) else {
            if required { throw DaemonConfiguration.FileError(description: "cannot read config file \(path): it does not exist") }
            return nil
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Handoffd {
    /// Parses the options, runs the daemon as a task and waits for it on the main thread.
    /// Not top-level `await`: Swift's async main ends the main thread (dispatch_main, then
    /// pthread_exit) as soon as the daemon first waits, and that exit unwinds the thread
    /// through the binary's unwind tables, whose pages then stay resident for the whole
    /// session (about 0.8 MB; Docs/Performance.md, "Idle memory"). A thread blocked here
    /// costs nothing and never wakes up.
    static func runUntilStopped() -> Never {
        let daemon: Handoffd
        do { daemon = try parse() } catch { exit(withError: error) }
        let finished = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        finished.completeWithTask { try await daemon.run() }
        do { try finished.futureResult.wait() } catch { exit(withError: error) }
        exit()
    }
}
