import HandoffCore

/// `PUT /v1/state/{app}`: an app's restoration state (paths to typed-JSON values), stamped
/// with its version; `continueWith`, one of the app's activities it may go along with.
public struct SaveStateRequest: Sendable, Equatable {
    public var version: String
    public var entries: JSONObject
    public var continueWith: String?

    public init(version: String, entries: JSONObject, continueWith: String? = nil) {
        self.version = version
        self.entries = entries
        self.continueWith = continueWith
    }

    public var json: JSONValue {
        var o: JSONObject = ["version": .string(version), "entries": .object(entries)]
        if let continueWith { o["continueWith"] = .string(continueWith) }
        return .object(o)
    }

    public init(body: JSONObject) throws(HandoffError) {
        (version, entries, continueWith) = try RequestBody.read(body) { r throws(ValidationError) in
            (try r.requiredString("version"), try r.object("entries") ?? [:], try r.string("continueWith"))
        }
    }
}

/// `POST /v1/state/{app}/restore`: a launching app asks for its state back.
public struct RestoreStateRequest: Sendable, Equatable {
    public var version: String
    public var acceptOlder: Bool
    /// The event session of the launch (else the `Handoff-Session` header), so a launch
    /// that dies with its session counts as failed.
    public var session: String?

    public init(version: String, acceptOlder: Bool = false, session: String? = nil) {
        self.version = version
        self.acceptOlder = acceptOlder
        self.session = session
    }

    public var json: JSONValue {
        var o: JSONObject = ["version": .string(version)]
        if acceptOlder { o["acceptOlder"] = .bool(true) }
        if let session { o["session"] = .string(session) }
        return .object(o)
    }

    public init(body: JSONObject) throws(HandoffError) {
        (version, acceptOlder, session) = try RequestBody.read(body) { r throws(ValidationError) in
            (try r.requiredString("version"), try r.bool("acceptOlder") ?? false, try r.string("session"))
        }
    }
}

/// The answer to a restore: the state, or none and why (`none_saved`, `version_changed`,
/// `crash_loop`).
public struct RestoredState: Sendable, Equatable {
    public var state: JSONObject?
    public var reason: String?
    public var savedVersion: String?
    public var savedAt: Timestamp?
    /// The state was saved by an older version of the app (and `acceptOlder` let it through).
    public var older: Bool?

    public init(state: JSONObject?, reason: String? = nil, savedVersion: String? = nil, savedAt: Timestamp? = nil, older: Bool? = nil) {
        self.state = state
        self.reason = reason
        self.savedVersion = savedVersion
        self.savedAt = savedAt
        self.older = older
    }

    public var json: JSONValue {
        var o: JSONObject = ["state": state.map(JSONValue.object) ?? .null]
        if let reason { o["reason"] = .string(reason) }
        if let savedVersion { o["savedVersion"] = .string(savedVersion) }
        if let savedAt { o["savedAt"] = .string(savedAt.rfc3339) }
        if let older { o["older"] = .bool(older) }
        return .object(o)
    }

    public init(json: JSONValue) {
        let o = json.objectValue ?? [:]
        self.init(state: o["state"]?.objectValue, reason: o["reason"]?.stringValue, savedVersion: o["savedVersion"]?.stringValue,
                  savedAt: o["savedAt"]?.stringValue.flatMap { Timestamp(rfc3339: $0) }, older: o["older"]?.boolValue)
    }
}

/// `GET /v1/state`: the apps with restoration state kept here.
public struct SavedState: Sendable, Equatable {
    public var app: String
    public var version: String
    public var savedAt: Timestamp
    /// How many paths (entries) the state has.
    public var paths: Int
    public var failedLaunches: Int
    public var continueWith: String?

    public init(app: String, version: String, savedAt: Timestamp, paths: Int, failedLaunches: Int, continueWith: String?) {
        self.app = app
        self.version = version
        self.savedAt = savedAt
        self.paths = paths
        self.failedLaunches = failedLaunches
        self.continueWith = continueWith
    }

    public var json: JSONValue {
        .object(["app": .string(app), "version": .string(version), "savedAt": .string(savedAt.rfc3339),
                 "paths": .integer(Int64(paths)), "failedLaunches": .integer(Int64(failedLaunches)),
                 "continueWith": continueWith.map(JSONValue.string) ?? .null])
    }

    public init(json: JSONValue) throws(ValidationError) {
        let o = json.objectValue ?? [:]
        guard let app = o["app"]?.stringValue, let version = o["version"]?.stringValue,
              let savedAt = o["savedAt"]?.stringValue.flatMap({ Timestamp(rfc3339: $0) })
        else { throw ValidationError(field: "apps", problem: "an entry needs app, version and savedAt") }
        self.init(app: app, version: version, savedAt: savedAt, paths: Int(o["paths"]?.integerValue ?? 0),
                  failedLaunches: Int(o["failedLaunches"]?.integerValue ?? 0), continueWith: o["continueWith"]?.stringValue)
    }

    public static func listJSON(_ list: [SavedState]) -> JSONValue { .object(["apps": .array(list.map(\.json))]) }

    public static func list(json: JSONValue) throws(ValidationError) -> [SavedState] {
        guard let items = json.objectValue?["apps"]?.arrayValue else { throw ValidationError(field: "apps", problem: "is required") }
        var out: [SavedState] = []
        for item in items { out.append(try SavedState(json: item)) }
        return out
    }
}
