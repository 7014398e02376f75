import HandoffCore

/// `POST /v1/activities`: an activity to make current, and what it belongs to.
public struct BecomeCurrentRequest: Sendable {
    public var draft: ActivityDraft
    /// The event session that owns it (else the `Handoff-Session` header, else handoffd).
    public var session: String?
    /// A file handoffd serves as its continuation streams (absolute).
    public var streamFile: String?
    /// The file the activity is about (absolute).
    public var document: String?
    /// Offer it to these workstations only (names or device IDs); nil or empty: to all.
    public var to: [String]?

    public init(draft: ActivityDraft, session: String? = nil, streamFile: String? = nil, document: String? = nil, to: [String]? = nil) {
        self.to = to
        self.draft = draft
        self.session = session
        self.streamFile = streamFile
        self.document = document
    }

    public var json: JSONValue {
        var body = ActivityJSON.encode(draft)
        if let session { body["session"] = .string(session) }
        if let streamFile { body["streamFile"] = .string(streamFile) }
        if let document { body["document"] = .string(document) }
        if let to, !to.isEmpty { body["to"] = .array(to.map(JSONValue.string)) }
        return .object(body)
    }

    /// The activity's fields first (`422 invalid_activity`), then the others (`400`).
    public init(body: JSONObject) throws(HandoffError) {
        do { draft = try ActivityJSON.decodeDraft(body, extraFields: ["session", "streamFile", "document", "to"]) } catch { throw .invalid(error) }
        session = try Self.string(body, "session", "session must be a string")
        streamFile = try Self.string(body, "streamFile", "streamFile must be a string")
        document = try Self.string(body, "document", "document must be a string: the file's absolute path")
        switch body["to"] {
        case nil, .null?:
            to = nil
        case .array(let list)?:
            let names = list.compactMap(\.stringValue)
            guard names.count == list.count, names.count <= 16 else {
                throw .badRequest("to must be a list of at most 16 workstations, by name or device ID")
            }
            to = names
        default:
            throw .badRequest("to must be a list of at most 16 workstations, by name or device ID")
        }
    }

    private static func string(_ body: JSONObject, _ key: String, _ problem: String) throws(HandoffError) -> String? {
        guard let v = body[key], v != .null else { return nil }
        guard let s = v.stringValue else { throw .badRequest(problem) }
        return s
    }
}
