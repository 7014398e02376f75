import HandoffCore

/// `GET /v1/devices`: the account's members and the devices removed from it (the daemon
/// encodes it, clients decode it).
public struct AccountDevices: Sendable {
    public struct Member: Sendable {
        public var id: String
        public var name: String
        public var isSelf: Bool
        public var connected: Bool
        public var introducedBy: (id: String, name: String)?
        public var introducedAt: Timestamp?

        public init(id: String, name: String, isSelf: Bool, connected: Bool, introducedBy: (id: String, name: String)?, introducedAt: Timestamp?) {
            self.id = id
            self.name = name
            self.isSelf = isSelf
            self.connected = connected
            self.introducedBy = introducedBy
            self.introducedAt = introducedAt
        }
    }

    public struct Removed: Sendable {
        public var id: String
        public var name: String
        public var removedBy: (id: String, name: String)?
        public var removedAt: Timestamp?

        public init(id: String, name: String, removedBy: (id: String, name: String)?, removedAt: Timestamp?) {
            self.id = id
            self.name = name
            self.removedBy = removedBy
            self.removedAt = removedAt
        }
    }

    public var members: [Member]
    public var removed: [Removed]

    public init(members: [Member], removed: [Removed]) {
        self.members = members
        self.removed = removed
    }

    public var json: JSONValue {
        func device(_ d: (id: String, name: String)?) -> JSONValue {
            d.map { .object(["id": .string($0.id), "name": .string($0.name)]) } ?? .null
        }
        return .object([
            "devices": .array(members.map { m in
                .object(["id": .string(m.id), "name": .string(m.name), "self": .bool(m.isSelf), "connected": .bool(m.connected),
                         "introducedBy": device(m.introducedBy), "introducedAt": m.introducedAt.map { .string($0.rfc3339) } ?? .null])
            }),
            "removed": .array(removed.map { r in
                .object(["id": .string(r.id), "name": .string(r.name), "removedBy": device(r.removedBy),
                         "removedAt": r.removedAt.map { .string($0.rfc3339) } ?? .null])
            }),
        ])
    }

    public init(json: JSONValue) {
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
