import HandoffCore

/// What an origin app sends on handoffd's descriptor socket, with one or two open files
/// (SCM_RIGHTS): the stream it is about to accept, whose bytes handoffd then moves itself:
/// it reads what goes to the other side from the first descriptor (the source), and writes
/// what the other side sends into the second (the sink), when there is one.
/// Docs/LocalAPI.md §15.8.
public struct DescriptorHandover: Sendable, Equatable {
    /// The message is one JSON object of at most this many bytes.
    public static let maximumBytes = 1024

    public var streamID: String

    public init(streamID: String) { self.streamID = streamID }

    public var json: JSONValue { .object(["streamID": .string(streamID)]) }

    public init(body: JSONObject) throws(HandoffError) {
        let id = try RequestBody.read(body) { r throws(ValidationError) in try r.string("streamID") }
        guard let id else { throw .badRequest("body.streamID: is required") }
        streamID = id
    }

    /// The answer, one JSON line: `{"ok":true}`, or the API's error shape.
    public static let acceptedJSON: JSONValue = .object(["ok": .bool(true)])
}
