import HandoffCore
import HandoffControlAPI

/// What handoffd asks its history helper, `handoff-history` (Docs/Architecture.md, "The
/// history helper"): one JSON object per line on the helper's standard input, answered by
/// one line on its standard output, in order. Both ends are the same build, so this is
/// not a public protocol; it is strict anyway, because a line that does not parse must
/// not be guessed at.
public enum HistoryHelperRequest: Sendable, Equatable {
    /// Note an offer (this workstation's or a peer's); ignored if it is not eligible for search.
    case record(ActivitySummary, device: PeerDevice, local: Bool, at: Timestamp)
    case search(HistoryQuery, at: Timestamp)
    /// One entry and its document reference, to reopen it.
    case entry(Int64)
    /// Drop what is older than the retention; answers how many.
    case expire(at: Timestamp)
    /// Forget everything; answers how many.
    case clear
    /// Forget one origin's activities with these persistent identifiers (nil: all of that
    /// origin's); answers how many.
    case forget(device: String, persistentIdentifiers: [String]?)
    case count

    public var json: JSONValue {
        switch self {
        case .record(let offer, let device, let local, let at):
            .object(["op": .string("record"), "offer": .object(offer.json), "device": device.json, "local": .bool(local), "at": .integer(at.seconds)])
        case .search(let query, let at):
            .object(["op": .string("search"), "query": query.json, "at": .integer(at.seconds)])
        case .entry(let id):
            .object(["op": .string("entry"), "id": .integer(id)])
        case .expire(let at):
            .object(["op": .string("expire"), "at": .integer(at.seconds)])
        case .clear:
            .object(["op": .string("clear")])
        case .forget(let device, let ids):
            .object(["op": .string("forget"), "device": .string(device), "persistentIdentifiers": ids.map { .array($0.map(JSONValue.string)) } ?? .null])
        case .count:
            .object(["op": .string("count")])
        }
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "request", problem: "is not an object") }
        var r = JSONFieldReader(o, path: "request")
        func at(_ r: inout JSONFieldReader) throws(ValidationError) -> Timestamp {
            guard let s = try r.integer("at") else { throw ValidationError(field: "request.at", problem: "is required") }
            return Timestamp(seconds: s)
        }
        switch try r.requiredString("op") {
        case "record":
            guard let offer = try r.object("offer") else { throw ValidationError(field: "request.offer", problem: "is required") }
            guard o["device"]?.objectValue != nil else { throw ValidationError(field: "request.device", problem: "is required") }
            let device = PeerDevice(json: o["device"])
            _ = try r.object("device")
            guard let local = try r.bool("local") else { throw ValidationError(field: "request.local", problem: "is required") }
            self = .record(try ActivitySummary(json: offer), device: device, local: local, at: try at(&r))
        case "search":
            guard let query = try r.object("query") else { throw ValidationError(field: "request.query", problem: "is required") }
            self = .search(try HistoryQuery(json: query), at: try at(&r))
        case "entry":
            guard let id = try r.integer("id") else { throw ValidationError(field: "request.id", problem: "is required") }
            self = .entry(id)
        case "expire":
            self = .expire(at: try at(&r))
        case "clear":
            self = .clear
        case "forget":
            self = .forget(device: try r.requiredString("device"), persistentIdentifiers: try r.strings("persistentIdentifiers"))
        case "count":
            self = .count
        case let op:
            throw ValidationError(field: "request.op", problem: "\"\(op)\" is not an operation")
        }
        try r.rejectUnknownFields()
    }
}

/// The helper's answer to one request: `{"ok": VALUE}` or `{"error": {"code", "message"}}`.
/// For `entry`, VALUE is `{"entry": ENTRY, "document": BASE64 | null}` (the document
/// reference in the binary property encoding), or null when there is no such entry.
public enum HistoryHelperReply: Sendable, Equatable {
    case ok(JSONValue)
    case failed(code: String, message: String)

    public var json: JSONValue {
        switch self {
        case .ok(let value): .object(["ok": value])
        case .failed(let code, let message): .object(["error": .object(["code": .string(code), "message": .string(message)])])
        }
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "reply", problem: "is not an object") }
        if let value = o["ok"], o.count == 1 {
            self = .ok(value)
        } else if let e = o["error"]?.objectValue, o.count == 1 {
            var r = JSONFieldReader(e, path: "reply.error")
            self = .failed(code: try r.requiredString("code"), message: try r.requiredString("message"))
        } else {
            throw ValidationError(field: "reply", problem: "has neither \"ok\" nor \"error\" alone")
        }
    }

    /// The `entry` answer's value.
    public static func entryJSON(_ entry: HistoryEntry, document: DocumentReference?) -> JSONValue {
        .object(["entry": entry.json,
                 "document": document.map { .string(Base64.encode(PropertyBinaryEncoding.encode($0.propertyValue))) } ?? .null])
    }

    public static func entry(json: JSONValue) throws(ValidationError) -> (HistoryEntry, DocumentReference?)? {
        if json == .null { return nil }
        guard let o = json.objectValue, let e = o["entry"] else { throw ValidationError(field: "reply.ok.entry", problem: "is required") }
        let entry = try HistoryEntry(json: e)
        guard case .string(let text)? = o["document"] else { return (entry, nil) }
        guard let bytes = Base64.decode(text), let value = try? PropertyBinaryEncoding.decode(bytes) else {
            throw ValidationError(field: "reply.ok.document", problem: "is not an encoded document reference")
        }
        return (entry, try DocumentReference(propertyValue: value))
    }
}
