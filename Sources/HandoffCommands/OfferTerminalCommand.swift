import ArgumentParser
import HandoffClient
import HandoffCore
import HandoffSystem
#if canImport(Glibc)
import Glibc
#endif

/// `handoffctl offer-terminal`: this shell, offered as a terminal your other workstations
/// continue over ssh (`handoff.terminal`, Docs/LocalAPI.md §24). handoffd adds the host
/// they connect to (`ssh-host`) and checks every field as they will.
struct OfferTerminalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offer-terminal", abstract: "Offer this shell to your other workstations, to continue over ssh.",
        discussion: """
            The directory is this one, and inside tmux the session is this one (continuing attaches \
            to it, or makes it). On the other workstation, `handoffctl continue` opens a terminal \
            running ssh to this host, or prints the command where there is no desktop.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("The directory to continue in (default: this one).", valueName: "path"))
    var directory: String?

    @Option(name: .customLong("osc7"), help: ArgumentHelp(
        "The directory as a terminal reports it (OSC 7: file://HOST/PATH, or the escape sequence): its path, and its host unless it is this one.",
        valueName: "url"))
    var osc7: String?

    @Option(name: .customLong("tmux-session"), help: ArgumentHelp("The tmux session to attach to (default: this shell's, inside tmux).", valueName: "name"))
    var tmuxSession: String?

    @Flag(name: .customLong("no-tmux"), help: "A login shell in the directory, even inside tmux.")
    var noTmux = false

    @Option(help: ArgumentHelp("The host to ssh to (default: handoffd's ssh-host, else this host's name).", valueName: "host"))
    var host: String?

    @Option(help: ArgumentHelp("The login name there (default: yours here).", valueName: "name"))
    var user: String?

    @Option(help: ArgumentHelp("ssh's port there (default: ssh's own).", valueName: "port"))
    var port: Int?

    @Option(help: ArgumentHelp("The shell offering it (the shell integration gives HOST:PID): its newer offer replaces its older one.", valueName: "id"))
    var shell: String?

    @Flag(help: "Print nothing (the shell integration runs it at prompts).")
    var quiet = false

    func validate() throws {
        if noTmux && tmuxSession != nil { throw ValidationError("--tmux-session and --no-tmux contradict each other") }
        if osc7 != nil && directory != nil { throw ValidationError("--osc7 and --directory both give the directory; give one") }
        if let osc7, TerminalSession.osc7(osc7) == nil {
            throw ValidationError("--osc7 must be a file:// URL with a percent-encoded path (as OSC 7 reports it), not \"\(osc7.prefix(80))\"")
        }
    }

    func run() async throws {
        let reported = osc7.flatMap(TerminalSession.osc7)
        let directory = try self.directory ?? reported?.directory ?? Self.currentDirectory()
        // A report from another host (a shell over ssh there) continues there; this host's
        // own name is left for handoffd (its ssh-host).
        let host = self.host ?? reported?.host.flatMap { $0 == HostName.current ? nil : $0 }
        let session = noTmux ? nil : (tmuxSession ?? Self.currentTmuxSession())
        var info = TerminalSession(host: host ?? "placeholder", user: user ?? Self.loginName(), port: port, directory: directory,
                                   tmuxSession: session, shell: shell).userInfo
        if host == nil { info["host"] = nil }  // handoffd names it
        var draft = ActivityDraft(activityType: WellKnownActivityType.terminal)
        draft.userInfo = info
        draft.requiredUserInfoKeys = ["directory", "host"]
        draft.title = session.map { "tmux \($0): \(directory)" } ?? directory
        let record = try await options.client.becomeCurrent(draft)
        if !quiet { Output.out(options.json ? record.json.prettySerialized() : record.activity.id.rawValue) }
    }

    static func currentDirectory() throws -> String {
        var buf = [CChar](repeating: 0, count: 4097)
        guard getcwd(&buf, buf.count) != nil else {
            throw CommandFailure(description: "cannot tell this directory: \(String(cString: strerror(errno))); give --directory", status: ExitStatus.usage)
        }
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func loginName() -> String? {
        guard let pw = getpwuid(getuid()), let name = pw.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    /// Inside tmux ($TMUX), the name of this pane's session, as tmux says it.
    static func currentTmuxSession() -> String? {
        guard getenv("TMUX") != nil else { return nil }
        guard let r = try? ShellCommand.run("exec tmux display-message -p '#S' 2>/dev/null", outputLimit: 4096), r.status == 0 else { return nil }
        let name = String(decoding: r.output.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }
}
