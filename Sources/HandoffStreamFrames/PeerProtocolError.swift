/// Why a peer's bytes (or an app's stream frames) were refused; the connection is closed
/// after it. Frames and peer messages share it, as they share the framing.
public struct PeerProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    public static func malformed(_ m: String) -> PeerProtocolError { PeerProtocolError(code: "malformed", message: m) }
    public static let notHandoff = PeerProtocolError(code: "not-handoff", message: "the hello does not start with the handoff magic")
}
