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
        }
        var st = stat()
        guard lstat(path, &st) == 0 else { return }  // nothing there
        guard (st.st_mode & S_IFMT) == S_IFSOCK else {
            throw SetupFailure(description: "\(path) exists and is not a socket; move it away or choose another path with --socket")
        }
        if isLive(path) { throw AlreadyRunning(path: path) }
        unlink(path)
    }

    static func isLive(_ path: String) -> Bool {
        guard let fd = connection(to: path) else { return false }
        close(fd)
        return true
    }

    /// A connected socket to the control socket at `path`, or nil. With `timeout`, the
    /// socket's send and receive timeouts, set before connecting: a full backlog then
    /// fails the connect after that long instead of blocking.
    static func connection(to path: String, timeout: Int? = nil) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        if let timeout {
            var tv = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { close(fd); return nil }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else { close(fd); return nil }
        return fd
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
