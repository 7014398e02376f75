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

    public var description: String {
        switch self {
        case .daemonNotRunning(let path, let detail):
            "handoffd is not running (\(detail) at \(path)); start it with `systemctl --user start handoffd`"
        case .api(let e): e.message
        case .badResponse(let m): "handoffd sent a response this client cannot read: \(m)"
        case .connectionLost(let m): "the connection to handoffd broke: \(m)"
        case .stream(_, let m): m
        }
    }
}
