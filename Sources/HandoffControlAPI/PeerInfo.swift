import HandoffCore

/// A workstation as `GET /v1/peers` lists it: the daemon encodes it, clients decode it.
public struct PeerInfo: Sendable, Equatable {
    /// Nil for an instance seen on the network that has not shown a certificate yet.
    public var id: String?
    public var name: String
    public var addresses: [String]
    public var trusted: Bool
    public var connected: Bool
    public var lastSeen: Timestamp?

    public init(id: String?, name: String, addresses: [String], trusted: Bool, connected: Bool, lastSeen: Timestamp?) {
        self.id = id
        self.name = name
        self.addresses = addresses
        self.trusted = trusted
        self.connected = connected
        self.lastSeen = lastSeen
    }

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

    /// `{"peers": [...]}`, the body of `GET /v1/peers`.
    public static func listJSON(_ peers: [PeerInfo]) -> JSONValue { .object(["peers": .array(peers.map(\.json))]) }

    public static func list(json: JSONValue) -> [PeerInfo]? {
        guard case .array(let items)? = json.objectValue?["peers"] else { return nil }
        return items.map(PeerInfo.init(json:))
    }
}
