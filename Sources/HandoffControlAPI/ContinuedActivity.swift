import HandoffCore

/// A continued activity's document as this workstation sees it.
public struct ContinuedDocument: Sendable, Equatable {
    /// A synced folder, the same on every device (LocalAPI.md §16.4).
    public struct Root: Sendable, Equatable {
        public var kind: String
        public var id: String

        public init(kind: String, id: String) {
            self.kind = kind
            self.id = id
        }
    }

    /// Inside its synced folder (or the file name, outside any).
    public var path: String
    public var size: Int64
    /// Hex.
    public var sha256: String
    /// `same`, `differs`, `missing` or `unmapped`.
    public var state: String
    public var localPath: String?
    public var reason: String?
    /// The synced folder it is in on the origin (`kind` and `id`), if any.
    public var root: Root?

    public var fileName: String { String(path.split(separator: "/").last ?? "document") }

    public init(path: String, size: Int64, sha256: String, state: String, localPath: String?, reason: String?, root: Root? = nil) {
        self.root = root
        self.path = path
        self.size = size
        self.sha256 = sha256
        self.state = state
        self.localPath = localPath
        self.reason = reason
    }

    /// From `GET /v1/continued/{id}/document`: `{"reference": {...}, "local": {...}}`.
    public init(json: JSONValue) {
        let o = json.objectValue ?? [:]
        let reference = o["reference"]?.objectValue ?? [:], local = o["local"]?.objectValue ?? [:]
        var size: Int64 = 0
        if case .integer(let n)? = reference["size"] { size = n }
        let root = reference["root"]?.objectValue
        self.init(path: reference["path"]?.stringValue ?? "document", size: size, sha256: reference["sha256"]?.stringValue ?? "",
                  state: local["state"]?.stringValue ?? "unmapped", localPath: local["path"]?.stringValue, reason: local["reason"]?.stringValue,
                  root: root.flatMap { r in r["kind"]?.stringValue.flatMap { k in r["id"]?.stringValue.map { Root(kind: k, id: $0) } } })
    }

    /// `{"reference": {"root", "path", "size", "sha256"}, "local": {"state", "path", "reason"?}}`.
    public var json: JSONValue {
        var local: JSONObject = ["state": .string(state), "path": localPath.map(JSONValue.string) ?? .null]
        if let reason { local["reason"] = .string(reason) }
        return .object([
            "reference": .object(["root": root.map { .object(["kind": .string($0.kind), "id": .string($0.id)]) } ?? .null,
                                  "path": .string(path), "size": .integer(size), "sha256": .string(sha256)]),
            "local": .object(local),
        ])
    }
}

/// What continuing returned: the activity as the origin sent it, and where from.
public struct ContinuedActivity: Sendable, Equatable {
    public var record: ActivityRecord
    public var device: PeerDevice
    /// When a launch was asked for: what the session agent opened, or why not.
    public var launch: LaunchOutcome?
    /// In `GET /v1/continued`: when it was continued here.
    public var continuedAt: Timestamp?

    /// For a terminal (`handoff.terminal`): how it continues here (handoffd decides from
    /// its preferences and synced folders), or why it cannot.
    public var terminal: Result<TerminalContinuation, ValidationError>?

    /// `terminal` defaults to what the activity itself gives with no preferences (ssh).
    public init(record: ActivityRecord, device: PeerDevice, launch: LaunchOutcome? = nil, continuedAt: Timestamp? = nil,
                terminal: Result<TerminalContinuation, ValidationError>?? = nil) {
        self.record = record
        self.device = device
        self.launch = launch
        self.continuedAt = continuedAt
        self.terminal = terminal ?? Self.terminal(of: record.activity) { _ in TerminalContinuation.Preferences() }
    }

    /// The terminal an activity describes, continued with the preferences of this side
    /// (which depend on the session: its synced folder); nil for other types.
    public static func terminal(of activity: Activity,
                                preferences: (TerminalSession) -> TerminalContinuation.Preferences) -> Result<TerminalContinuation, ValidationError>? {
        guard activity.activityType == WellKnownActivityType.terminal else { return nil }
        do {
            let session = try TerminalSession(userInfo: activity.userInfo)
            return .success(TerminalContinuation(session, preferences: preferences(session)))
        } catch {
            return .failure(error)
        }
    }

    /// The activity record's fields, plus `device`, `launch`, `continuedAt` and `terminal`
    /// when known.
    public var json: JSONValue {
        var o = record.json.objectValue ?? [:]
        o["device"] = device.json
        if let launch { o["launch"] = launch.json }
        switch terminal {
        case .success(let t)?: o["terminal"] = t.json
        case .failure(let e)?: o["terminal"] = .object(["error": .string(e.description)])
        case nil: break
        }
        if let continuedAt { o["continuedAt"] = .string(continuedAt.rfc3339) }
        return .object(o)
    }

    public init(json: JSONValue) throws(ValidationError) {
        record = try ActivityRecord(json: json)
        let o = json.objectValue ?? [:]
        device = PeerDevice(json: o["device"])
        if let l = o["launch"], l != .null { launch = try LaunchOutcome(json: l) }
        continuedAt = o["continuedAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
        if let t = o["terminal"], t != .null {
            if let e = t.objectValue?["error"]?.stringValue {
                terminal = .failure(ValidationError(field: "terminal", problem: e))
            } else {
                terminal = .success(try TerminalContinuation(json: t))
            }
        }
    }

    /// `GET /v1/continued`: `{"continued": [...]}`, newest first.
    public static func listJSON(_ list: [ContinuedActivity]) -> JSONValue { .object(["continued": .array(list.map(\.json))]) }

    public static func list(json: JSONValue) throws(ValidationError) -> [ContinuedActivity] {
        guard let items = json.objectValue?["continued"]?.arrayValue else { throw ValidationError(field: "continued", problem: "is required") }
        var out: [ContinuedActivity] = []
        for item in items { out.append(try ContinuedActivity(json: item)) }
        return out
    }
}
