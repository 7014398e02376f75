import CGIO
import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

/// Opens a continued terminal (`handoff.terminal`) in the user's terminal emulator, running
/// what handoffd decided (`TerminalContinuation`: ssh, mosh or a local shell, built from the
/// activity's checked fields, never a command the origin sent). The emulator, in the order
/// the freedesktop proposal and Debian give: `xdg-terminal-exec` where installed (it knows
/// the user's preferred terminal and takes the command as its arguments), else a desktop
/// entry of the `TerminalEmulator` category (the user's own first), else Debian's
/// `x-terminal-emulator -e` (the alternatives system's default).
enum TerminalLauncher {
    struct Emulator: Equatable {
        let path: String
        /// Before the command: `-e` for x-terminal-emulator, nothing for xdg-terminal-exec,
        /// an entry's own arguments and its exec option for a desktop entry.
        let prefix: [String]
        /// What the user reads: the program, or the desktop entry's name.
        let name: String

        init(path: String, prefix: [String], name: String? = nil) {
            self.path = path
            self.prefix = prefix
            self.name = name ?? String(path.split(separator: "/").last ?? "terminal")
        }
    }

    /// A terminal emulator's desktop entry, as GIO reads it.
    struct Entry: Equatable {
        let id: String
        let name: String
        /// `Exec=` as words, field codes dropped.
        let exec: [String]
        /// `X-TerminalArgExec=` (the xdg-terminal-exec proposal's key: the option before the
        /// command, possibly empty); nil when the entry has none.
        let argExec: String?
        let isUserEntry: Bool
    }

    /// The agent's own `PATH`, where the terminal is looked for.
    static var searchPath: String { getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin" }

    /// The terminal to use, searched on `path` (a `PATH` value) and among `entries`; nil:
    /// none installed.
    static func emulator(path: String, entries: [Entry] = []) -> Emulator? {
        let dirs = path.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        func find(_ name: String) -> String? {
            if name.hasPrefix("/") { return access(name, X_OK) == 0 ? name : nil }
            guard !name.contains("/") else { return nil }
            return dirs.lazy.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
        }
        if let p = find("xdg-terminal-exec") { return Emulator(path: p, prefix: []) }
        let ordered = entries.sorted { ($0.isUserEntry ? 0 : 1, $0.id) < ($1.isUserEntry ? 0 : 1, $1.id) }
        for entry in ordered {
            guard let program = entry.exec.first, let p = find(program) else { continue }
            let option = entry.argExec ?? execOption(forProgram: String(program.split(separator: "/").last ?? ""))
            return Emulator(path: p, prefix: Array(entry.exec.dropFirst()) + option.split(separator: " ").map(String.init), name: entry.name)
        }
        if let p = find("x-terminal-emulator") { return Emulator(path: p, prefix: ["-e"]) }
        return nil
    }

    /// What comes before the command for terminals whose entries do not say
    /// (`X-TerminalArgExec`, as listed by xdg-terminal-exec): most take `-e`.
    static func execOption(forProgram program: String) -> String {
        switch program {
        case "gnome-terminal", "kgx", "ptyxis", "gnome-console": "--"
        case "kitty", "foot", "footclient", "contour", "rio": ""
        case "xfce4-terminal", "terminator", "mate-terminal", "sakura", "guake": "-x"
        default: "-e"
        }
    }

    /// The desktop entries of the `TerminalEmulator` category that would show in this
    /// desktop. Call on the GLib thread.
    static func entries(userApplications: String) -> [Entry] {
        var found: [Entry] = []
        let list = g_app_info_get_all()
        defer { handoff_list_free_objects(list) }
        var node = list
        while let n = node {
            node = n.pointee.next
            guard let info = n.pointee.data, handoff_is_desktop_app_info(info) != 0 else { continue }
            let app = OpaquePointer(info)
            guard g_app_info_should_show(app) != 0, let categories = g_desktop_app_info_get_categories(app),
                  String(cString: categories).split(separator: ";").contains("TerminalEmulator"),
                  let id = g_app_info_get_id(app).map({ String(cString: $0) }),
                  let commandLine = g_app_info_get_commandline(app) else { continue }
            var argc: Int32 = 0
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
            var error: UnsafeMutablePointer<GError>?
            guard g_shell_parse_argv(commandLine, &argc, &argv, &error) != 0, let argv else {
                g_clear_error(&error)
                continue
            }
            defer { g_strfreev(argv) }
            let words = (0..<Int(argc)).compactMap { argv[$0].map { String(cString: $0) } }.filter { !$0.hasPrefix("%") }
            let file = g_desktop_app_info_get_filename(app).map { String(cString: $0) } ?? ""
            let argExec = g_desktop_app_info_has_key(app, "X-TerminalArgExec") != 0
                ? (takeGString(g_desktop_app_info_get_string(app, "X-TerminalArgExec")) ?? "") : nil
            found.append(Entry(id: id, name: g_app_info_get_name(app).map { String(cString: $0) } ?? id, exec: words, argExec: argExec,
                               isUserEntry: file.hasPrefix(userApplications + "/")))
        }
        return found
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Starts `emulator` with the command in `directory` (nil: the agent's), detached (GLib
    /// reaps it through an intermediate child, and closes every descriptor of ours);
    /// `environment` is added to the agent's own.
    static func launch(_ emulator: Emulator, command: [String], directory: String? = nil, environment: [(String, String)]) throws(Failure) {
        let argv = [emulator.path] + emulator.prefix + command
        var env: [String] = []
        var i = 0
        while let e = environ[i] {
            let entry = String(cString: e)
            if !environment.contains(where: { entry.hasPrefix($0.0 + "=") }) { env.append(entry) }
            i += 1
        }
        env += environment.map { "\($0.0)=\($0.1)" }
        var cArgv: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var cEnv: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer {
            for p in cArgv { free(p) }
            for p in cEnv { free(p) }
        }
        var error: UnsafeMutablePointer<GError>?
        let ok = g_spawn_async(directory, &cArgv, &cEnv, GSpawnFlags(rawValue: 0), nil, nil, nil, &error)
        if ok == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            throw Failure(description: "cannot start \(emulator.name): \(message)")
        }
    }
}
