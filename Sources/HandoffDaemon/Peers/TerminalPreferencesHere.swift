import HandoffCore
import HandoffControlAPI
#if canImport(Glibc)
import Glibc
#endif

/// What decides how a terminal continues on this workstation (`TerminalContinuation`):
/// the user's settings, whether mosh is installed, and this workstation's copy of the
/// session's synced folder. Reads the disk: call it off the event loop.
enum TerminalPreferencesHere {
    static func preferences(for session: TerminalSession, transport: TerminalContinuation.Transport, syncedLocal: Bool,
                            configuredRoots: [(name: String, path: String)], path: String = searchPath) -> TerminalContinuation.Preferences {
        var local: String?
        if syncedLocal, session.tmuxSession == nil, let folder = session.syncedFolder,
           let root = SyncedRoots.discover(configured: configuredRoots).root(folder.root) {
            // A symbolic link inside the folder may point out of it: the directory opened is
            // one that is really in this side's copy, as for documents.
            let candidate = SyncedRoots.resolved(folder.locate(under: root.path))
            var st = stat()
            if candidate == root.path || candidate.hasPrefix(root.path + "/"), stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
                local = candidate
            }
        }
        return TerminalContinuation.Preferences(transport: transport, moshInstalled: transport == .mosh && isInstalled("mosh", path: path),
                                                localDirectory: local)
    }

    /// The daemon's own `PATH`: what the session agent's terminal will find too, for
    /// programs installed the usual way.
    static var searchPath: String { getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin" }

    static func isInstalled(_ program: String, path: String) -> Bool {
        path.split(separator: ":").contains { $0.hasPrefix("/") && access("\($0)/\(program)", X_OK) == 0 }
    }

    /// Where the origin's directory lies among this workstation's synced folders (the
    /// deepest one), for the session it offers.
    static func syncedFolder(of directory: String, configuredRoots: [(name: String, path: String)]) -> SyncedFolderPath? {
        let roots = SyncedRoots.discover(configured: configuredRoots)
        let resolved = SyncedRoots.resolved(directory)
        if let exact = roots.roots.filter({ $0.path == resolved }).max(by: { $0.path.count < $1.path.count }) {
            return SyncedFolderPath(root: exact.id, path: "")
        }
        guard let (root, inside) = roots.locate(resolved) else { return nil }
        return (try? DocumentReference.validate(relativePath: inside)) != nil ? SyncedFolderPath(root: root.id, path: inside) : nil
    }
}
