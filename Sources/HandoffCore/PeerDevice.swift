
/// A peer workstation as events and listings name it.
public struct PeerDevice: Sendable, Equatable {
    public var id: String
    public var name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }

    public var json: JSONValue { .object(["id": .string(id), "name": .string(name)]) }

    public init(json: JSONValue?) {
        let o = json?.objectValue
        id = o?["id"]?.stringValue ?? ""
        name = o?["name"]?.stringValue ?? ""
    }
}
