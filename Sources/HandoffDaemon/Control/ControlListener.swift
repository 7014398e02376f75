import HandoffSystem
#if canImport(Glibc)
import Glibc
#endif

/// Where the control socket comes from: a path handoffd binds itself, or a listening
/// socket systemd passed in (handoffd.socket, LISTEN_FDS).
public enum ControlListener: Sendable {
    case path(String)
    case inherited(fd: Int32, path: String)

    public var path: String {
        switch self {
        case .path(let p), .inherited(_, let p): p
        }
    }

    public struct AlreadyRunning: Error, CustomStringConvertible {
        public let path: String
        public var description: String {
            "another handoffd is already running on \(path); stop it first (`systemctl --user stop handoffd`) or use --socket for a second one"
        }
    }

    public struct SetupFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Makes the socket's directory (0700) and clears a stale socket file, but never a
    /// live daemon's: it connects first, and only a refused connection counts as stale.
    static func prepare(path: String) throws {
        let dir = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !dir.isEmpty {
            do { try AtomicFile.makeDirectories(dir) } catch { throw SetupFailure(description: "\(error)") }
            try checkFolder(dir)
        }
        var st = stat()
        guard lstat(path, &st) == 0 else { return }  // nothing there
        guard (st.st_mode & S_IFMT) == S_IFSOCK else {
            throw SetupFailure(description: "\(path) exists and is not a socket; move it away or choose another path with --socket")
        }
        switch server(at: path) {
        case .none: unlink(path)
        case .ours: throw AlreadyRunning(path: path)
        case .foreign(let uid):
            throw SetupFailure(description: "\(path) is served by another user (uid \(uid)), who may be posing as handoffd; remove it, or choose another path with --socket (or set XDG_RUNTIME_DIR)")
        }
    }

    /// Whoever controls the socket's folder can replace the socket and serve clients a fake
    /// handoffd: it must be this user's alone (the `/tmp/handoff-UID` fallback is a name any
    /// user can take first), or a sticky folder of this user or root such as `/tmp`, in
    /// which no one else may remove or rename the socket (and a socket someone else put
    /// there first is found below, by its server's uid).
    static func checkFolder(_ dir: String) throws {
        var st = stat()
        guard lstat(dir, &st) == 0 else { throw SetupFailure(description: "cannot examine \(dir): \(AtomicFile.errnoText())") }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw SetupFailure(description: "\(dir), the socket's folder, is not a folder (a symbolic link?); remove it, or choose another path with --socket")
        }
        if st.st_mode & S_ISVTX != 0, st.st_uid == getuid() || st.st_uid == 0 { return }
        guard st.st_uid == getuid() else {
            throw SetupFailure(description: "\(dir), the socket's folder, belongs to another user (uid \(st.st_uid)), who could replace the socket; remove it, or choose another path with --socket (or set XDG_RUNTIME_DIR)")
        }
        guard st.st_mode & 0o022 == 0 else {
            throw SetupFailure(description: "\(dir), the socket's folder, is writable by others, who could replace the socket; chmod go-w '\(dir)', or choose another path with --socket")
        }
    }

    enum Server: Equatable { case none, ours, foreign(uid_t) }

    /// Who answers at `path`: nobody (a stale socket), a process of this user, or another user's.
    static func server(at path: String) -> Server {
        guard let fd = try? UnixSocket.connect(to: path) else { return .none }
        defer { close(fd) }
        if let uid = UnixSocket.peerUID(fd), uid != getuid() { return .foreign(uid) }
        return .ours
    }


    /// The socket systemd passed, per sd_listen_fds(3): LISTEN_PID must be us; the
    /// variables are then removed so children do not inherit them.
    public static func fromSystemd() -> Int32? {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pidText = getenv("LISTEN_PID").map({ String(cString: $0) }), Int32(pidText) == getpid(),
              let countText = getenv("LISTEN_FDS").map({ String(cString: $0) }), let count = Int(countText), count >= 1
        else { return nil }
        let fd: Int32 = 3
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }
}
