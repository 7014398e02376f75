import HandoffCore

/// What handoffd and its KDE Connect endpoint (handoff-kdeconnect) say to each other over
/// the socket pair handoffd starts it with: one JSON object a line.
/// - handoffd asks: `{"id": N, "op": "status"}`, or an op on a device
///   (`pair`, `accept`, `reject`, `unpair`: `{"id", "op", "device"}`; `share`: also `url`
///   or `text`);
/// - the endpoint answers each, in any order: `{"id": N, "result": ...}` or
///   `{"id": N, "error": {"kind", "code", "message"}}`;
/// - and tells what happened unasked: `{"notice": "pairing-requested", "device": {...}}`.
public enum KDEConnectBridgeLine: Sendable, Equatable {
    case request(id: Int64, op: String, fields: JSONObject)
    case reply(id: Int64, result: Result<JSONValue, HandoffError>)
    case notice(String, JSONObject)

    /// A line is at most this long either way (a status lists at most a few hundred devices).
    public static let limit = 1 << 20

    public init(parsing line: some Collection<UInt8>) throws(KDEConnectError) {
        guard line.count <= Self.limit else { throw KDEConnectError("a bridge line over \(Self.limit) bytes") }
        let value: JSONValue
        do { value = try JSONValue(parsing: Array(line)) } catch { throw KDEConnectError("a bridge line that is not JSON: \(error)") }
        guard var o = value.objectValue else { throw KDEConnectError("a bridge line that is not an object") }
        if let notice = o["notice"]?.stringValue {
            o["notice"] = nil
            self = .notice(notice, o)
            return
        }
        guard case .integer(let id)? = o["id"] else { throw KDEConnectError("a bridge line without an id") }
        if let op = o["op"]?.stringValue {
            o["id"] = nil
            o["op"] = nil
            self = .request(id: id, op: op, fields: o)
        } else if let result = o["result"] {
            self = .reply(id: id, result: .success(result))
        } else if let e = o["error"]?.objectValue, let code = e["code"]?.stringValue, let message = e["message"]?.stringValue {
            let kind = HandoffError.Kind.allCases.first { "\($0)" == e["kind"]?.stringValue } ?? .internal
            self = .reply(id: id, result: .failure(HandoffError(kind, code: String(code.prefix(64)), message: String(message.prefix(4096)))))
        } else {
            throw KDEConnectError("a bridge line that is neither a request, an answer nor a notice")
        }
    }

    public var json: JSONValue {
        switch self {
        case .request(let id, let op, let fields):
            var o: JSONObject = ["id": .integer(id), "op": .string(op)]
            for (k, v) in fields.pairs { o[k] = v }
            return .object(o)
        case .reply(let id, .success(let v)):
            return .object(["id": .integer(id), "result": v])
        case .reply(let id, .failure(let e)):
            return .object(["id": .integer(id), "error": .object(["kind": .string("\(e.kind)"), "code": .string(e.code), "message": .string(e.message)])])
        case .notice(let name, let fields):
            var o: JSONObject = ["notice": .string(name)]
            for (k, v) in fields.pairs { o[k] = v }
            return .object(o)
        }
    }

    public var encoded: [UInt8] { json.serializedBytes() + [UInt8(ascii: "\n")] }
}
