import HandoffCore

/// One line of the `GET /v1/events` stream. Every line is a JSON object with an `event`
/// field; clients must ignore events they do not know (peer events come later).
public enum ControlEvent: Sendable, Equatable {
    /// First line of every stream: the session token that makes this stream an owner.
    case session(token: String)
    case becameCurrent(ActivityRecord)
    case resigned(ActivityRecord)
    case updated(ActivityRecord)
    case invalidated(ActivityRecord, reason: String)
    case expired(ActivityRecord)
    /// To the owner only: refresh the payload now, answer by updating the activity.
    case willSave(activityID: ActivityID, saveID: String)
    /// An event this client does not know, kept whole.
    case other(name: String, body: JSONObject)

    public var name: String {
        switch self {
        case .session: "session"
        case .becameCurrent: "became-current"
        case .resigned: "resigned"
        case .updated: "updated"
        case .invalidated: "invalidated"
        case .expired: "expired"
        case .willSave: "will-save"
        case .other(let n, _): n
        }
    }

    public var json: JSONValue {
        var o: JSONObject = ["event": .string(name)]
        switch self {
        case .session(let token): o["session"] = .string(token)
        case .becameCurrent(let r), .resigned(let r), .updated(let r), .expired(let r):
            o["activity"] = r.json
        case .invalidated(let r, let reason):
            o["activity"] = r.json
            o["reason"] = .string(reason)
        case .willSave(let id, let saveID):
            o["activityID"] = .string(id.rawValue)
            o["saveID"] = .string(saveID)
        case .other(_, let body):
            for (k, v) in body.pairs where k != "event" { o[k] = v }
        }
        return .object(o)
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue, let name = o["event"]?.stringValue else {
            throw ValidationError(field: "event", problem: "missing")
        }
        func record() throws(ValidationError) -> ActivityRecord {
            guard let a = o["activity"] else { throw ValidationError(field: "activity", problem: "missing") }
            return try ActivityRecord(json: a)
        }
        switch name {
        case "session":
            guard let t = o["session"]?.stringValue else { throw ValidationError(field: "session", problem: "missing") }
            self = .session(token: t)
        case "became-current": self = .becameCurrent(try record())
        case "resigned": self = .resigned(try record())
        case "updated": self = .updated(try record())
        case "expired": self = .expired(try record())
        case "invalidated": self = .invalidated(try record(), reason: o["reason"]?.stringValue ?? "")
        case "will-save":
            guard let id = o["activityID"]?.stringValue.flatMap(ActivityID.init), let s = o["saveID"]?.stringValue else {
                throw ValidationError(field: "activityID", problem: "missing")
            }
            self = .willSave(activityID: id, saveID: s)
        default:
            self = .other(name: name, body: o)
        }
    }
}
