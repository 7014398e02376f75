import HandoffCore
import HandoffWire

/// A workstation as `GET /v1/peers` lists it.
public struct PeerInfo: Sendable, Equatable {
    /// Nil for an instance seen on the network that has not shown a certificate yet.
    public var id: String?
    public var name: String
    public var addresses: [String]
    public var trusted: Bool
    public var connected: Bool
    public var lastSeen: Timestamp?

    public init(json: JSONValue) {
        let o = json.objectValue ?? [:]
        id = o["id"]?.stringValue
        name = o["name"]?.stringValue ?? ""
        if case .array(let a)? = o["addresses"] { addresses = a.compactMap(\.stringValue) } else { addresses = [] }
        trusted = o["trusted"] == .bool(true)
        connected = o["connected"] == .bool(true)
        lastSeen = o["lastSeen"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
    }

    public var json: JSONValue {
        .object([
            "id": id.map(JSONValue.string) ?? .null, "name": .string(name), "addresses": .array(addresses.map(JSONValue.string)),
            "trusted": .bool(trusted), "connected": .bool(connected), "lastSeen": lastSeen.map { .string($0.rfc3339) } ?? .null,
        ])
    }
}

/// An activity another workstation offers.
public struct Offer: Sendable, Equatable {
    public var device: PeerDevice
    public var activity: ActivitySummary
    public var ageSeconds: Double

    public var json: JSONValue {
        .object(["device": device.json, "activity": .object(activity.json), "ageSeconds": .double(ageSeconds)])
    }
}

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
}

/// What continuing returned: the activity as the origin sent it, and where from.
public struct ContinuedActivity: Sendable, Equatable {
    public var record: ActivityRecord
    public var device: PeerDevice
    /// When a launch was asked for: what the session agent opened, or why not.
    public var launch: LaunchOutcome?

    public init(record: ActivityRecord, device: PeerDevice, launch: LaunchOutcome? = nil) {
        self.record = record
        self.device = device
        self.launch = launch
    }

    public var json: JSONValue {
        var o = record.json.objectValue ?? [:]
        o["device"] = device.json
        if let launch { o["launch"] = launch.json }
        return .object(o)
    }
}
