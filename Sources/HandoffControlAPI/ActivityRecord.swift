import HandoffCore

/// Where an activity stands on its own device.
public enum ActivityState: String, Sendable {
    case current, resigned, invalidated, expired
}

/// Who an activity belongs to: an app's event-stream session (it dies with the session)
/// or the daemon itself (it lives until replaced, resigned, invalidated or expired).
public enum ActivityOwner: Sendable, Equatable {
    case daemon
    case session(String)

    public var label: String {
        switch self {
        case .daemon: "daemon"
        case .session: "session"
        }
    }
}

/// An activity as the control API returns it: the activity's fields plus `state`,
/// `owner`, `payloadSize` and, for fresh snapshots, `stale`.
public struct ActivityRecord: Sendable, Equatable {
    public var activity: Activity
    public var state: ActivityState
    public var owner: String
    public var payloadSize: Int
    /// Set on snapshots: true when the owner did not answer will-save in time and the
    /// last saved payload was served instead.
    public var stale: Bool?
    /// The file the daemon serves as this activity's continuation streams (this device only).
    public var streamFile: String?
    /// The local file of the activity's document (this device only).
    public var documentFile: String?
    /// The only workstations it is offered to (device IDs, `become-current --to`); nil:
    /// every member (this device only).
    public var to: [String]?

    public init(activity: Activity, state: ActivityState, owner: String, payloadSize: Int, stale: Bool? = nil, streamFile: String? = nil,
                documentFile: String? = nil, to: [String]? = nil) {
        self.documentFile = documentFile
        self.to = to
        self.activity = activity
        self.state = state
        self.owner = owner
        self.payloadSize = payloadSize
        self.stale = stale
        self.streamFile = streamFile
    }

    /// What the app should hear about it (`warnings` in the JSON, the `Handoff-Warning`
    /// header on become-current and update): a payload over the advised size, which still
    /// works up to the daemon's cap but slows every fetch.
    public var warnings: [String] {
        guard payloadSize > ActivityLimits.recommendedEncodedBytes else { return [] }
        return ["the encoded activity is \(payloadSize) bytes, over the advised \(ActivityLimits.recommendedEncodedBytes): keep the payload small and send bulk data through a continuation stream"]
    }

    public var json: JSONValue {
        var o = ActivityJSON.encode(activity)
        o["state"] = .string(state.rawValue)
        o["owner"] = .string(owner)
        o["payloadSize"] = .integer(Int64(payloadSize))
        if let stale { o["stale"] = .bool(stale) }
        if let streamFile { o["streamFile"] = .string(streamFile) }
        if let documentFile { o["documentFile"] = .string(documentFile) }
        if let to { o["to"] = .array(to.map(JSONValue.string)) }
        if !warnings.isEmpty { o["warnings"] = .array(warnings.map(JSONValue.string)) }
        return .object(o)
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "activity", problem: "is not an object") }
        activity = try ActivityJSON.decodeActivity(o)
        state = o["state"]?.stringValue.flatMap(ActivityState.init(rawValue:)) ?? .current
        owner = o["owner"]?.stringValue ?? "daemon"
        if case .integer(let n)? = o["payloadSize"] { payloadSize = Int(n) } else { payloadSize = 0 }
        if case .bool(let b)? = o["stale"] { stale = b }
        streamFile = o["streamFile"]?.stringValue
        documentFile = o["documentFile"]?.stringValue
        if case .array(let list)? = o["to"] { to = list.compactMap(\.stringValue) }
    }
}
