/// Identifies one browse result. Avahi reports a peer once per (interface, protocol), so one
/// peer usually has two keys (IPv4 and IPv6) per shared link; only one of them is resolved
/// and reported.
public struct ServiceKey: Sendable, Hashable {
    public var interfaceIndex: Int32
    /// The mDNS transport it was seen on; the resolved address has the same family.
    public var ipv6: Bool
    public var name: String
    public var domain: String

    public init(interfaceIndex: Int32, ipv6: Bool, name: String, domain: String) {
        self.interfaceIndex = interfaceIndex
        self.ipv6 = ipv6
        self.name = name
        self.domain = domain
    }

    /// The same instance on the same interface over the other address family.
    var sibling: ServiceKey { ServiceKey(interfaceIndex: interfaceIndex, ipv6: !ipv6, name: name, domain: domain) }
}

/// A resolved browse result.
public struct DiscoveredService: Sendable, Equatable {
    public var key: ServiceKey
    public var hostName: String
    /// Numeric address; IPv6 link-local carries "%<ifindex>" (e.g. "fe80::1%3") so that it can be
    /// connected to (without the scope connect fails with EINVAL).
    public var address: String
    public var port: UInt16
    /// RFC 6763: a key without "=" maps to ""; for repeated keys the first one wins.
    public var txt: [String: String]

    public init(key: ServiceKey, hostName: String, address: String, port: UInt16, txt: [String: String]) {
        self.key = key
        self.hostName = hostName
        self.address = address
        self.port = port
        self.txt = txt
    }
}
