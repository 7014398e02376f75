/// A shell the user was in (`handoff.terminal`): where to reach it and where it was, to
/// continue it on another workstation over ssh (Docs/LocalAPI.md §24). Every field comes
/// from a peer, so every field is checked strictly and every argument of the command
/// built from them is quoted: nothing the origin chose is run except `tmux` or the user's
/// own login shell, in a directory.
public struct TerminalSession: Sendable, Equatable {
    /// What ssh connects to: a host name or an IP address.
    public var host: String
    /// The login name there; nil: ssh's own choice (the local user, or `~/.ssh/config`'s).
    public var user: String?
    public var port: Int?
    /// Where the shell was: absolute, without `.` or `..` components.
    public var directory: String
    /// The tmux session it ran in, attached to (or made) again.
    public var tmuxSession: String?
    /// Which shell offers it (the shell integration's `HOST:PID`): a newer offer from the
    /// same shell replaces the older one instead of piling up beside it.
    public var shell: String?
    /// The directory as the synced folder it lies in (filled by the origin's handoffd): a
    /// workstation that syncs that folder too can open its own copy in a local terminal.
    public var syncedFolder: SyncedFolderPath?

    public init(host: String, user: String? = nil, port: Int? = nil, directory: String, tmuxSession: String? = nil, shell: String? = nil,
                syncedFolder: SyncedFolderPath? = nil) {
        self.shell = shell
        self.syncedFolder = syncedFolder
        self.host = host
        self.user = user
        self.port = port
        self.directory = directory
        self.tmuxSession = tmuxSession
    }

    /// The activity's `userInfo`: `host`, `directory`, and `user`, `port`, `tmuxSession`,
    /// `shell`, `syncedFolder` when set.
    public var userInfo: UserInfo {
        var info: UserInfo = ["host": .string(host), "directory": .string(directory)]
        if let user { info["user"] = .string(user) }
        if let port { info["port"] = .integer(Int64(port)) }
        if let tmuxSession { info["tmuxSession"] = .string(tmuxSession) }
        if let shell { info["shell"] = .string(shell) }
        if let syncedFolder { info[SyncedFolderPath.userInfoKey] = syncedFolder.propertyValue }
        return info
    }

    /// Reads and checks a terminal activity's `userInfo`; the error names the field.
    public init(userInfo info: UserInfo) throws(ValidationError) {
        func string(_ key: String) throws(ValidationError) -> String? {
            guard let v = info[key] else { return nil }
            guard case .string(let s) = v else { throw ValidationError(field: "userInfo.\(key)", problem: "is not a string") }
            return s
        }
        guard let host = try string("host") else { throw ValidationError(field: "userInfo.host", problem: "is required") }
        guard let directory = try string("directory") else { throw ValidationError(field: "userInfo.directory", problem: "is required") }
        var port: Int?
        if let v = info["port"] {
            guard case .integer(let n) = v, (1...65535).contains(n) else { throw ValidationError(field: "userInfo.port", problem: "must be 1 to 65535") }
            port = Int(n)
        }
        self.init(host: host, user: try string("user"), port: port, directory: directory, tmuxSession: try string("tmuxSession"),
                  shell: try string("shell"), syncedFolder: try info[SyncedFolderPath.userInfoKey].map(SyncedFolderPath.init(propertyValue:)))
        try validate()
    }

    public func validate() throws(ValidationError) {
        guard Self.isHost(host) else {
            throw ValidationError(field: "userInfo.host", problem: "must be a host name (letters, digits, - and .) or an IP address")
        }
        if let user, !Self.isUser(user) {
            throw ValidationError(field: "userInfo.user", problem: "must be a login name: a letter or _, then letters, digits, _, . or -, at most 32")
        }
        if let port, !(1...65535).contains(port) { throw ValidationError(field: "userInfo.port", problem: "must be 1 to 65535") }
        if let problem = Self.directoryProblem(directory) { throw ValidationError(field: "userInfo.directory", problem: problem) }
        if let tmuxSession, !Self.isSessionName(tmuxSession) {
            throw ValidationError(field: "userInfo.tmuxSession", problem: "must be 1 to 64 letters, digits, _ or -")
        }
        if let shell, !((1...128).contains(shell.utf8.count)
                        && shell.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._:-".unicodeScalars.contains($0)) })) {
            throw ValidationError(field: "userInfo.shell", problem: "must be 1 to 128 letters, digits, ., _, : or -")
        }
    }

    // MARK: - Continuing it

    /// What continues it: ssh with a terminal, to the host, running tmux (attached to its
    /// session, or a new one by that name in the directory) or a login shell in the
    /// directory. Each remote word is quoted for the remote shell.
    public func sshArguments() -> [String] {
        var argv = ["ssh", "-t"]
        if let user { argv += ["-l", user] }
        if let port { argv += ["-p", String(port)] }
        return argv + ["--", host, remoteCommand]
    }

    /// What the remote shell runs. That shell is the user's login shell there, which may be
    /// fish or tcsh: the words it reads are plain or single-quoted only, and what needs a
    /// POSIX shell (`cd`, `${SHELL}`) runs in `sh -c`, the directory passed as `$1`.
    public var remoteCommand: String {
        remoteArguments.map(Self.quoted).joined(separator: " ")
    }

    /// The remote command as words: tmux attached to (or making) the session, or a login
    /// shell in the directory.
    var remoteArguments: [String] {
        if let tmuxSession { return ["tmux", "new-session", "-A", "-s", tmuxSession, "-c", directory] }
        return ["exec"] + Self.loginShell(in: directory)
    }

    /// `sh` changing to `directory` and becoming the user's login shell (`$SHELL` where it
    /// runs): the directory is an argument (`$1`), never part of the script.
    public static func loginShell(in directory: String) -> [String] {
        ["sh", "-c", #"cd -- "$1" && exec "${SHELL:-/bin/sh}" -l"#, "sh", directory]
    }

    /// The same over mosh, which quotes each word for the remote shell itself and runs the
    /// command without one (so no `exec`): `--ssh` carries the port, `user@host` the login.
    public func moshArguments() -> [String] {
        var argv = ["mosh"]
        if let port { argv.append("--ssh=ssh -p \(port)") }
        let words = tmuxSession == nil ? Self.loginShell(in: directory) : remoteArguments
        return argv + ["--", user.map { "\($0)@\(host)" } ?? host] + words
    }

    /// The command as a line for a shell here, every argument quoted.
    public var commandLine: String { sshArguments().map(Self.quoted).joined(separator: " ") }

    /// POSIX shell quoting: single quotes around everything, a quote as `'\''`. Plain
    /// words are left as they are, for people to read.
    public static func quoted(_ s: String) -> String {
        let plain = !s.isEmpty && s.unicodeScalars.allSatisfy { c in
            c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || "-_./:@=+,".unicodeScalars.contains(c))
        }
        if plain { return s }
        return "'" + s.map { $0 == "'" ? "'\\''" : String($0) }.joined() + "'"
    }

    // MARK: - OSC 7

    /// What a terminal reports of a shell's directory (OSC 7, `ESC ] 7 ; file://HOST/PATH
    /// BEL`, the path percent-encoded), given as the escape sequence or the URL alone: the
    /// host (nil when empty or `localhost`) and the directory. Nil for anything else;
    /// the directory is checked like any other when offered.
    public static func osc7(_ report: String) -> (host: String?, directory: String)? {
        var s = Substring(report)
        if s.hasPrefix("\u{1b}]7;") { s = s.dropFirst(4) }
        if s.hasSuffix("\u{07}") { s = s.dropLast() } else if s.hasSuffix("\u{1b}\\") { s = s.dropLast(2) }
        guard s.hasPrefix("file://") else { return nil }
        s = s.dropFirst(7)
        guard let slash = s.firstIndex(of: "/") else { return nil }
        let host = String(s[..<slash])
        var bytes: [UInt8] = []
        var utf8 = Array(s[slash...].utf8)[...]
        while let b = utf8.popFirst() {
            guard b == UInt8(ascii: "%") else { bytes.append(b); continue }
            guard utf8.count >= 2, let v = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(v)
            utf8 = utf8.dropFirst(2)
        }
        guard let directory = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else { return nil }
        return (host.isEmpty || host == "localhost" ? nil : host, directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory)
    }

    // MARK: - The checks

    public static func isHost(_ s: String) -> Bool {
        guard (1...253).contains(s.utf8.count), !s.hasPrefix("-") else { return false }
        if s.contains(":") {  // an IPv6 address
            return s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isASCIIHexDigit || $0 == ":" || $0 == ".") }
        }
        let labels = s.hasSuffix(".") ? s.dropLast().split(separator: ".", omittingEmptySubsequences: false)
                                      : s.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && !label.hasPrefix("-")
                && label.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") }
        }
    }

    static func isUser(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, (1...32).contains(s.utf8.count),
              first.isASCII, first.properties.isAlphabetic || first == "_" else { return false }
        return s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_.-".unicodeScalars.contains($0)) }
    }

    static func isSessionName(_ s: String) -> Bool {
        (1...64).contains(s.utf8.count)
            && s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
    }

    /// Characters a shell acts on: quoting makes them harmless, but no directory a person
    /// works in needs them, and one that has them is more likely an attack than a folder.
    static let shellActive: Set<Unicode.Scalar> = ["$", "`", ";", "|", "&", "<", ">", "\\", "!", "\"", "'"]

    static func directoryProblem(_ d: String) -> String? {
        guard d.hasPrefix("/") else { return "must be an absolute path" }
        guard d.utf8.count <= 4096 else { return "longer than 4096 bytes" }
        guard !d.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || shellActive.contains($0) }) else {
            return "must not contain control characters or any of $ ` ; | & < > \\ ! \" '"
        }
        let parts = d.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        if d != "/" && parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) {
            return "must be clean: no empty, . or .. components"
        }
        return nil
    }
}

extension WellKnownActivityType {
    /// "The user was in this shell": `userInfo` is a `TerminalSession`'s. The continuing
    /// side opens a terminal running ssh to it (tmux attached again where it ran in tmux).
    public static let terminal = "handoff.terminal"
}
