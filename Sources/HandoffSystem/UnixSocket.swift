import CHandoffSystem
#if canImport(Glibc)
import Glibc
#endif

/// A blocking connection to a Unix stream socket, for the two places that talk to handoffd
/// without NIO: handoffctl's one exchange (`BlockingExchange`) and handoffd asking itself
/// (`RequestPathWarmUp`, `ControlListener.isLive`).
public enum UnixSocket {
    public enum ConnectFailure: Error, Sendable {
        case pathTooLong(capacity: Int)
        case failed(errno: CInt)
    }

    /// The user ID of the process at the other end of a connected Unix socket (for a
    /// listening socket's clients: the process that made the listener), from `SO_PEERCRED`;
    /// nil if the kernel does not say.
    public static func peerUID(_ fd: CInt) -> uid_t? {
        var credentials = handoff_ucred()
        var length = socklen_t(MemoryLayout<handoff_ucred>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return credentials.uid
    }

    /// A connected, close-on-exec socket. With `timeout` (seconds), its send and receive
    /// timeouts, set before connecting: a full backlog then fails the connect after that long
    /// instead of blocking. `nonBlocking` (for NIO, which takes the socket over) fails a
    /// connect to a full backlog at once with EAGAIN.
    public static func connect(to path: String, timeout: Int? = nil, nonBlocking: Bool = false) throws(ConnectFailure) -> CInt {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else { throw .pathTooLong(capacity: capacity) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let flags = Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | flags, 0)
        guard fd >= 0 else { throw .failed(errno: errno) }
        if let timeout {
            var tv = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let e = errno
            close(fd)
            throw .failed(errno: e)
        }
        return fd
    }
}
