import HandoffControlAPI

/// What went wrong talking to handoffd, worded for the person who will read it.
public enum HandoffClientError: Error, CustomStringConvertible, Sendable {
    /// Nothing answers at the socket.
    case daemonNotRunning(socketPath: String, detail: String)
    /// handoffd answered with an error.
    case api(APIError)
    /// handoffd answered something this client cannot read.
    case badResponse(String)
    /// The connection broke while talking.
    case connectionLost(String)
    /// A continuation stream failed (its error frame, or the connection's end before it ended).
    case stream(code: String, message: String)
    /// The socket is served by another user's process: nothing is sent to it.
    case foreignServer(socketPath: String, uid: UInt32)

    public var description: String {
        switch self {
        case .daemonNotRunning(let path, let detail):
            "handoffd is not running (\(detail) at \(path)); start it with `systemctl --user start handoffd`"
        case .api(let e): e.message
        case .badResponse(let m): "handoffd sent a response this client cannot read: \(m)"
        case .connectionLost(let m): "the connection to handoffd broke: \(m)"
        case .stream(_, let m): m
        case .foreignServer(let path, let uid):
            "the socket at \(path) is served by another user (uid \(uid)), not by your handoffd, so nothing was sent to it; " +
            "someone may be posing as handoffd: remove that socket's folder if you can, and keep XDG_RUNTIME_DIR set (systemd sets it at login)"
        }
    }
}
