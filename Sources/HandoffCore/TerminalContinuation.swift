/// How a terminal continues on this workstation, decided from the session the origin sent
/// and this workstation's own preferences (Docs/LocalAPI.md §24):
/// - in tmux: attach to that session again, over mosh when preferred and installed here,
///   else ssh (the programs and scrollback live there);
/// - not in tmux, in a folder this workstation syncs too (and opening it here is wanted):
///   a local login shell in this workstation's copy, no network needed;
/// - otherwise a login shell in the same directory, over mosh or ssh.
/// Every argument comes from `TerminalSession`'s checked fields; nothing the origin chose is
/// run but tmux or a login shell.
public struct TerminalContinuation: Sendable, Equatable {
    public enum Route: String, Sendable, CaseIterable {
        case ssh, mosh, local
    }

    public enum Transport: String, Sendable, CaseIterable {
        case ssh, mosh
    }

    /// What the continuing workstation prefers and has.
    public struct Preferences: Sendable, Equatable {
        public var transport: Transport
        public var moshInstalled: Bool
        /// This workstation's copy of the session's synced folder, when it exists and
        /// opening it locally is wanted; nil otherwise.
        public var localDirectory: String?

        public init(transport: Transport = .ssh, moshInstalled: Bool = false, localDirectory: String? = nil) {
            self.transport = transport
            self.moshInstalled = moshInstalled
            self.localDirectory = localDirectory
        }
    }

    public var route: Route
    /// What the terminal emulator runs.
    public var argv: [String]
    /// Where it starts: the local copy for `local`, nil for the others.
    public var directory: String?
    /// What a person types in a shell here to continue it (printed when headless).
    public var commandLine: String
    /// Why the route is not the preferred one, when it is not.
    public var note: String?

    public init(route: Route, argv: [String], directory: String?, commandLine: String, note: String?) {
        self.route = route
        self.argv = argv
        self.directory = directory
        self.commandLine = commandLine
        self.note = note
    }

    public init(_ session: TerminalSession, preferences: Preferences = Preferences()) {
        if session.tmuxSession == nil, let local = preferences.localDirectory {
            self.init(route: .local, argv: TerminalSession.loginShell(in: local), directory: local,
                      commandLine: "cd -- " + TerminalSession.quoted(local), note: nil)
            return
        }
        var note: String?
        if preferences.transport == .mosh {
            if preferences.moshInstalled {
                let argv = session.moshArguments()
                self.init(route: .mosh, argv: argv, directory: nil, commandLine: argv.map(TerminalSession.quoted).joined(separator: " "), note: nil)
                return
            }
            note = "mosh is preferred but not installed here (apt install mosh); continuing over ssh"
        }
        self.init(route: .ssh, argv: session.sshArguments(), directory: nil, commandLine: session.commandLine, note: note)
    }

    public var json: JSONValue {
        var o: JSONObject = ["route": .string(route.rawValue), "argv": .array(argv.map(JSONValue.string)), "commandLine": .string(commandLine)]
        if let directory { o["directory"] = .string(directory) }
        if let note { o["note"] = .string(note) }
        return .object(o)
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "terminal", problem: "is not an object") }
        guard let r = o["route"]?.stringValue, let route = Route(rawValue: r) else {
            throw ValidationError(field: "terminal.route", problem: "must be one of \(Route.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let items = o["argv"]?.arrayValue, !items.isEmpty else { throw ValidationError(field: "terminal.argv", problem: "must be a list of strings") }
        var argv: [String] = []
        for item in items {
            guard let s = item.stringValue else { throw ValidationError(field: "terminal.argv", problem: "must be a list of strings") }
            argv.append(s)
        }
        guard let line = o["commandLine"]?.stringValue else { throw ValidationError(field: "terminal.commandLine", problem: "is required") }
        self.init(route: route, argv: argv, directory: o["directory"]?.stringValue, commandLine: line, note: o["note"]?.stringValue)
    }
}
