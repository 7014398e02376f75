/// What we announce as `_handoff._tcp`: the instance name, the port and ordered TXT pairs.
public struct ServiceAdvertisement: Sendable, Equatable {
    /// The requested instance name (the device name). Avahi may publish it as "name #2" after a
    /// collision; `AvahiEvent.published` reports the name actually in use.
    public var name: String
    public var port: UInt16
    /// Published in this order. Entries with an empty key, a key containing "=", or longer than
    /// 255 bytes ("key=value") are skipped with a warning rather than silently truncated.
    public var txt: [(key: String, value: String)]
    /// The SRV target's own host name (one label, the domain is Avahi's) and the addresses
    /// published under it, so the records need not carry Avahi's host name. nil, or no
    /// address that Avahi takes: Avahi's host name.
    public var host: String?
    public var addresses: [HostAddress]

    public init(name: String, port: UInt16, txt: [(String, String)], host: String? = nil, addresses: [HostAddress] = []) {
        self.name = name
        self.port = port
        self.txt = txt.map { (key: $0.0, value: $0.1) }
        self.host = host
        self.addresses = addresses
    }

    // Tuples are not Equatable, so this cannot be synthesized.
    public static func == (lhs: ServiceAdvertisement, rhs: ServiceAdvertisement) -> Bool {
        lhs.name == rhs.name && lhs.port == rhs.port && lhs.host == rhs.host && lhs.addresses == rhs.addresses
            && lhs.txt.elementsEqual(rhs.txt) { $0.key == $1.key && $0.value == $1.value }
    }
}
