import HandoffAvahi

/// What the network looks like from here, as far as peers care: the addresses of the
/// interfaces that are up (not loopback) and the routes. Two snapshots say whether the
/// network changed (PeerProtocol.md §3.3): a new address means a new advertisement, and
/// any change means peers that are not linked are worth dialling now.
struct NetworkSnapshot: Sendable, Equatable {
    var addresses: Set<HostAddress> = []
    /// Route lines reduced to what identifies a route (not its use counters).
    var routes: Set<String> = []

    struct Change: Sendable, Equatable {
        var addresses: Bool
        var routes: Bool
    }

    /// nil when nothing a peer cares about changed (a lifetime refresh, say).
    func change(from old: NetworkSnapshot) -> Change? {
        let change = Change(addresses: addresses != old.addresses, routes: routes != old.routes)
        return change.addresses || change.routes ? change : nil
    }

    /// The identifying fields of /proc/net/route lines (interface, destination, gateway,
    /// metric, mask), skipping the header.
    static func ipv4Routes(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 8 else { return nil }
            return "4 \(f[0]) \(f[1]) \(f[2]) \(f[6]) \(f[7])"
        })
    }

    /// The identifying fields of /proc/net/ipv6_route lines (destination and length,
    /// source and length, next hop, metric, interface).
    static func ipv6Routes(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").compactMap { line in
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 10 else { return nil }
            return "6 \(f[0])/\(f[1]) \(f[2])/\(f[3]) \(f[4]) \(f[5]) \(f[9])"
        })
    }
}
