/// One address of this host on one interface, as published for the advertisement's own
/// random host name (the SRV target) instead of Avahi's host name.
public struct HostAddress: Sendable, Hashable, Comparable {
    public var interfaceIndex: Int32
    /// Numeric, without a scope ("10.0.0.2", "fe80::1").
    public var address: String

    public init(interfaceIndex: Int32, address: String) {
        self.interfaceIndex = interfaceIndex
        self.address = address
    }

    public static func < (l: HostAddress, r: HostAddress) -> Bool {
        (l.interfaceIndex, l.address) < (r.interfaceIndex, r.address)
    }
}
