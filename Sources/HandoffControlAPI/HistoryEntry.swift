import HandoffCore

/// One activity in the history (Docs/LocalAPI.md §19): offered here or by a trusted
/// workstation, indexed because its app allowed it. The daemon encodes it, clients decode it.
public struct HistoryEntry: Sendable, Equatable {
    public var id: Int64
    public var activityID: String
    public var activityType: String
    public var title: String
    public var keywords: [String]
    public var webpageURL: String?
    /// The document's path inside its synced folder.
    public var documentPath: String?
    public var device: PeerDevice
    /// Offered by this workstation.
    public var local: Bool
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp

    public init(id: Int64, activityID: String, activityType: String, title: String, keywords: [String], webpageURL: String?,
                documentPath: String?, device: PeerDevice, local: Bool, firstSeen: Timestamp, lastSeen: Timestamp) {
        self.id = id
        self.activityID = activityID
        self.activityType = activityType
        self.title = title
        self.keywords = keywords
        self.webpageURL = webpageURL
        self.documentPath = documentPath
        self.device = device
        self.local = local
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }

    public var json: JSONValue {
        .object([
            "id": .integer(id), "activityID": .string(activityID), "activityType": .string(activityType), "title": .string(title),
            "keywords": .array(keywords.map(JSONValue.string)), "webpageURL": webpageURL.map(JSONValue.string) ?? .null,
            "documentPath": documentPath.map(JSONValue.string) ?? .null, "device": device.json, "local": .bool(local),
            "firstSeen": .string(firstSeen.rfc3339), "lastSeen": .string(lastSeen.rfc3339),
        ])
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "entry", problem: "is not an object") }
        var r = JSONFieldReader(o)
        guard let id = try r.integer("id") else { throw ValidationError(field: "id", problem: "is required") }
        self.id = id
        activityID = try r.requiredString("activityID")
        activityType = try r.requiredString("activityType")
        title = try r.string("title") ?? ""
        keywords = try r.strings("keywords") ?? []
        webpageURL = try r.string("webpageURL")
        documentPath = try r.string("documentPath")
        device = PeerDevice(json: o["device"])
        local = try r.bool("local") ?? false
        firstSeen = try r.timestamp("firstSeen") ?? Timestamp(seconds: 0)
        lastSeen = try r.timestamp("lastSeen") ?? firstSeen
    }

    /// `{"entries": [...]}`.
    public static func listJSON(_ entries: [HistoryEntry]) -> JSONValue { .object(["entries": .array(entries.map(\.json))]) }

    public static func list(json: JSONValue) throws(ValidationError) -> [HistoryEntry] {
        guard case .array(let items)? = json.objectValue?["entries"] else { throw ValidationError(field: "entries", problem: "is required") }
        var out: [HistoryEntry] = []
        for item in items { out.append(try HistoryEntry(json: item)) }
        return out
    }
}

/// A history search (`POST /v1/history/search`): words to match (all of them, as
/// prefixes), the device, how far back, how many.
public struct HistoryQuery: Sendable, Equatable {
    public var text: String?
    public var device: String?
    public var since: Timestamp?
    public var limit: Int

    public static let maximumLimit = 1000

    public init(text: String? = nil, device: String? = nil, since: Timestamp? = nil, limit: Int = 50) {
        self.text = text
        self.device = device
        self.since = since
        self.limit = limit
    }

    public var json: JSONValue {
        var o: JSONObject = ["limit": .integer(Int64(limit))]
        if let text { o["query"] = .string(text) }
        if let device { o["device"] = .string(device) }
        if let since { o["since"] = .string(since.rfc3339) }
        return .object(o)
    }

    /// Strict: unknown fields and bad values are errors.
    public init(json o: JSONObject) throws(ValidationError) {
        var r = JSONFieldReader(o, path: "body")
        text = try r.string("query")
        device = try r.string("device")
        since = try r.timestamp("since")
        let limit = try r.integer("limit") ?? 50
        try r.rejectUnknownFields()
        guard (1...Int64(HistoryQuery.maximumLimit)).contains(limit) else {
            throw ValidationError(field: "body.limit", problem: "must be 1 to \(HistoryQuery.maximumLimit)")
        }
        self.limit = Int(limit)
    }
}

/// `POST /v1/history/{id}/open`: the entry, and what the session agent opened.
public struct ReopenedEntry: Sendable, Equatable {
    public var entry: HistoryEntry
    public var launch: LaunchOutcome

    public init(entry: HistoryEntry, launch: LaunchOutcome) {
        self.entry = entry
        self.launch = launch
    }

    public var json: JSONValue { .object(["entry": entry.json, "launch": launch.json]) }

    public init(json: JSONValue) throws(ValidationError) {
        entry = try HistoryEntry(json: json.objectValue?["entry"] ?? .null)
        launch = try LaunchOutcome(json: json.objectValue?["launch"] ?? .null)
    }
}

/// `DELETE /v1/history`: how many entries were forgotten.
/// `POST /v1/history/forget`: this workstation's saved activities to delete from the
/// histories of the account, by persistent identifier (`persistentIdentifiers`), or all
/// of them (`"all": true`).
public struct ForgetSavedRequest: Sendable, Equatable {
    /// nil: all of this workstation's.
    public var persistentIdentifiers: [String]?

    public init(persistentIdentifiers: [String]?) { self.persistentIdentifiers = persistentIdentifiers }

    public var json: JSONValue {
        .object(persistentIdentifiers.map { ["persistentIdentifiers": .array($0.map(JSONValue.string))] } ?? ["all": .bool(true)])
    }

    public init(body o: JSONObject) throws(ValidationError) {
        var r = JSONFieldReader(o)
        let ids = try r.strings("persistentIdentifiers")
        let all = try r.bool("all") ?? false
        try r.rejectUnknownFields()
        switch (ids, all) {
        case (nil, true):
            persistentIdentifiers = nil
        case (let ids?, false):
            guard (1...ActivityLimits.maximumForgottenIdentifiers).contains(ids.count) else {
                throw ValidationError(field: "persistentIdentifiers", problem: "must hold 1 to \(ActivityLimits.maximumForgottenIdentifiers) identifiers")
            }
            for (n, id) in ids.enumerated() where !SearchFields.isPersistentIdentifier(id) {
                throw ValidationError(field: "persistentIdentifiers[\(n)]", problem: "must be 1 to 256 bytes without control characters")
            }
            persistentIdentifiers = ids
        default:
            throw ValidationError(field: "persistentIdentifiers", problem: "give persistentIdentifiers, or \"all\": true, not both")
        }
    }
}

/// What `POST /v1/history/forget` did: entries removed here, and workstations asked to do the same.
public struct SavedForgotten: Sendable, Equatable {
    public var removed: Int
    public var asked: Int

    public init(removed: Int, asked: Int) {
        self.removed = removed
        self.asked = asked
    }

    public var json: JSONValue { .object(["removed": .integer(Int64(removed)), "asked": .integer(Int64(asked))]) }

    public init(json: JSONValue) {
        removed = Int(json.objectValue?["removed"]?.integerValue ?? 0)
        asked = Int(json.objectValue?["asked"]?.integerValue ?? 0)
    }
}

public struct HistoryCleared: Sendable, Equatable {
    public var removed: Int

    public init(removed: Int) { self.removed = removed }

    public var json: JSONValue { .object(["removed": .integer(Int64(removed))]) }

    public init(json: JSONValue) { removed = Int(json.objectValue?["removed"]?.integerValue ?? 0) }
}
