import HandoffCore

/// `GET /v1/devices`: the account's members and the devices removed from it.
public struct AccountDevices: Sendable {
    public struct Member: Sendable {
        public var id: String
        public var name: String
        public var isSelf: Bool
        public var connected: Bool
        public var introducedBy: (id: String, name: String)?
        public var introducedAt: Timestamp?
    }

    public struct Removed: Sendable {
        public var id: String
        public var name: String
        public var removedBy: (id: String, name: String)?
        public var removedAt: Timestamp?
    }

    public var members: [Member]
    public var removed: [Removed]
    public let json: JSONValue

    public init(json: JSONValue) {
        self.json = json
        let o = json.objectValue
        func device(_ v: JSONValue?) -> (id: String, name: String)? {
            guard let d = v?.objectValue, let id = d["id"]?.stringValue else { return nil }
            return (id, d["name"]?.stringValue ?? "")
        }
        members = (o?["devices"]?.arrayValue ?? []).compactMap { v in
            guard let d = v.objectValue, let id = d["id"]?.stringValue else { return nil }
            return Member(id: id, name: d["name"]?.stringValue ?? "", isSelf: d["self"] == .bool(true), connected: d["connected"] == .bool(true),
                          introducedBy: device(d["introducedBy"]), introducedAt: d["introducedAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:)))
        }
        removed = (o?["removed"]?.arrayValue ?? []).compactMap { v in
            guard let d = v.objectValue, let id = d["id"]?.stringValue else { return nil }
            return Removed(id: id, name: d["name"]?.stringValue ?? "", removedBy: device(d["removedBy"]),
                           removedAt: d["removedAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:)))
        }
    }
}
