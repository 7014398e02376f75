import HandoffCore

/// `POST /v1/streams/{streamID}/refuse`: the origin's owner will not take a stream; the
/// reason reaches the continuing app.
public struct RefuseStreamRequest: Sendable, Equatable {
    public var reason: String?

    public init(reason: String? = nil) { self.reason = reason }

    public var json: JSONValue { .object(reason.map { ["reason": .string($0)] } ?? [:]) }

    public init(body: JSONObject) throws(HandoffError) {
        reason = try RequestBody.read(body) { r throws(ValidationError) in try r.string("reason") }
    }
}
