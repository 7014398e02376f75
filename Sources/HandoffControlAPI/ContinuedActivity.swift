import HandoffCore

/// A continued activity's document as this workstation sees it.
public struct ContinuedDocument: Sendable, Equatable {
    /// Inside its synced folder (or the file name, outside any).
    public var path: String
    public var size: Int64
    /// Hex.
    public var sha256: String
    /// `same`, `differs`, `missing` or `unmapped`.
    public var state: String
    public var localPath: String?
    public var reason: String?

    public var fileName: String { String(path.split(separator: "/").last ?? "document") }

    public init(path: String, size: Int64, sha256: String, state: String, localPath: String?, reason: String?) {
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
        self.init(path: reference["path"]?.stringValue ?? "document", size: size, sha256: reference["sha256"]?.stringValue ?? "",
                  state: local["state"]?.stringValue ?? "unmapped", localPath: local["path"]?.stringValue, reason: local["reason"]?.stringValue)
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

    public init(record: ActivityRecord, device: PeerDevice, launch: LaunchOutcome? = nil, continuedAt: Timestamp? = nil) {
        self.record = record
        self.device = device
        self.launch = launch
        self.continuedAt = continuedAt
    }

    /// The activity record's fields, plus `device`, `launch` and `continuedAt` when known.
    public var json: JSONValue {
        var o = record.json.objectValue ?? [:]
        o["device"] = device.json
        if let launch { o["launch"] = launch.json }
        if let continuedAt { o["continuedAt"] = .string(continuedAt.rfc3339) }
        return .object(o)
    }

    public init(json: JSONValue) throws(ValidationError) {
        record = try ActivityRecord(json: json)
        let o = json.objectValue ?? [:]
        device = PeerDevice(json: o["device"])
        if let l = o["launch"], l != .null { launch = try LaunchOutcome(json: l) }
        continuedAt = o["continuedAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
    }
}
