import CGIO
import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

/// Opens a continued terminal (`handoff.terminal`) in the user's terminal emulator, running
/// the ssh command built from the activity (`TerminalSession`, never a command the origin
/// sent): `xdg-terminal-exec` where installed (the freedesktop proposal: it knows the
/// user's preferred terminal and takes the command as its arguments), else Debian's
/// `x-terminal-emulator -e` (the alternatives system's default terminal).
enum TerminalLauncher {
    struct Emulator: Equatable {
        let path: String
        /// Before the command: `-e` for x-terminal-emulator, nothing for xdg-terminal-exec.
        let prefix: [String]
    }

    /// The agent's own `PATH`, where the terminal is looked for.
    static var searchPath: String { getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin" }

    /// The terminal to use, searched on `path` (a `PATH` value); nil: none installed.
    static func emulator(path: String) -> Emulator? {
        let dirs = path.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        func find(_ name: String) -> String? {
            dirs.lazy.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
        }
        if let p = find("xdg-terminal-exec") { return Emulator(path: p, prefix: []) }
        if let p = find("x-terminal-emulator") { return Emulator(path: p, prefix: ["-e"]) }
        return nil
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Starts `emulator` with the command, detached (GLib reaps it through an intermediate
    /// child); `environment` is added to the agent's own.
    static func launch(_ emulator: Emulator, command: [String], environment: [(String, String)]) throws(Failure) {
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
        let ok = g_spawn_async(nil, &cArgv, &cEnv, GSpawnFlags(rawValue: 0), nil, nil, nil, &error)
        if ok == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            throw Failure(description: "cannot start \(emulator.path): \(message)")
        }
    }
}
