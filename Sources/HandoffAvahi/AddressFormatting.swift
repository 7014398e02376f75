import CAvahi

enum AddressFormatting {
    /// avahi_address_snprint drops the scope, and a bare fe80:: address cannot be connected to,
    /// so link-local IPv6 gets "%<interface index>" (getaddrinfo and NIO accept that form).
    static func string(_ address: UnsafePointer<AvahiAddress>, interface: AvahiIfIndex) -> String {
        var buffer = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        let text = buffer.withUnsafeMutableBufferPointer { buf -> String in
            avahi_address_snprint(buf.baseAddress, buf.count, address)
            return String(cString: buf.baseAddress!)
        }
        guard address.pointee.proto == AvahiProtocol(AVAHI_PROTO_INET6) else { return text }
        let bytes = address.pointee.data.ipv6.address
        let linkLocal = bytes.0 == 0xfe && (bytes.1 & 0xc0) == 0x80
        return linkLocal ? "\(text)%\(interface)" : text
    }
}
