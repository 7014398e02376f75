import HandoffCore
import HandoffKDEConnect

/// What a KDE Connect peer sends (Docs/KDEConnect.md): the input's lines as packets. Each
/// line is decoded as a packet (under the unpaired cap) and, if it is one, read as an
/// identity both ways (from UDP, needing a port; from inside TLS, not) and given to a
/// pairing state machine, whose time moves a little with every line. Checked: what is read
/// obeys the protocol's rules (an id by KDE's rule, a filtered name of at most 32
/// characters, a port in 1716-1764, bounded capabilities, a payload only on KDE's ports),
/// a packet or identity written again reads back the same, and pairing's state matches its
/// actions (a deadline only while a request is pending; `paired` only as it becomes paired).
/// Each line is also read as a line between handoffd and the endpoint (`KDEConnectBridgeLine`).
public enum KDEConnectFuzzing {
    public static func test(_ data: [UInt8]) {
        // The first byte says which version is spoken and whether the device starts paired.
        let lines = data.dropFirst().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(64)
        let version = (data.first ?? 0) & 1 == 0 ? 8 : 7
        var pairing = KDEConnectPairing(paired: (data.first ?? 0) & 2 != 0, protocolVersion: version)
        var now = Timestamp(seconds: 1_765_000_000, nanoseconds: 0)
        for (index, line) in lines.enumerated() {
            now = now.adding(nanoseconds: Int64(line.count) * 100_000_000)
            // The same line as handoffd reads the endpoint's (a process that faces the LAN):
            // whatever it reads is written again the same.
            if let bridge = try? KDEConnectBridgeLine(parsing: line) {
                fuzzCheck((try? KDEConnectBridgeLine(parsing: bridge.encoded.dropLast())) == bridge, "a bridge line written again reads back otherwise")
            }
            guard let packet = try? KDEConnectPacket.decode(line, limit: KDEConnectLimits.unpairedPacketBytes) else { continue }
            fuzzCheck(packet.type.hasPrefix("kdeconnect."), "a packet read with type \(packet.type)")
            if let payload = packet.payload {
                fuzzCheck(payload.size > 0 && KDEConnectLimits.ports.contains(payload.port), "a payload read as \(payload)")
            }
            let again = try? KDEConnectPacket.decode(packet.encoded(id: Int64(index)).dropLast(), limit: .max)
            fuzzCheck(again == packet, "a packet written again reads back otherwise")
            for needsPort in [true, false] {
                guard let identity = try? KDEConnectIdentity(packet, needsPort: needsPort) else { continue }
                check(identity, needsPort: needsPort)
                let reread = try? KDEConnectIdentity(identity.packet(), needsPort: needsPort)
                fuzzCheck(reread == identity, "an identity written again reads back otherwise")
            }
            let wasPaired = pairing.state == .paired
            let actions: [KDEConnectPairing.Action]
            switch index % 7 {
            case 5: actions = pairing.accept(at: now)
            case 6: actions = pairing.timeDue(at: now.adding(nanoseconds: 31_000_000_000))
            default: actions = packet.type == KDEConnectPacket.pair ? pairing.received(packet, at: now) : pairing.request(at: now)
            }
            if actions.contains(.paired) { fuzzCheck(pairing.state == .paired && !wasPaired, "paired announced from \(wasPaired ? "paired" : "unpaired") into \(pairing.state)") }
            if actions.contains(.unpaired) { fuzzCheck(wasPaired, "unpaired announced for a device that was not paired") }
            switch pairing.state {
            case .requested, .requestedByPeer: fuzzCheck(pairing.deadline != nil, "a pending request without a deadline")
            case .paired, .notPaired: fuzzCheck(pairing.deadline == nil && pairing.timestamp == nil, "a deadline or timestamp with nothing pending")
            }
            if version < 8, case .requestedByPeer(let t, _) = pairing.state { fuzzCheck(t == nil, "a v7 request with a timestamp") }
        }
    }

    static func check(_ identity: KDEConnectIdentity, needsPort: Bool) {
        fuzzCheck(KDEConnectDeviceID(identity.deviceID.rawValue) != nil, "an identity read with the id \(identity.deviceID)")
        fuzzCheck(!identity.name.isEmpty && identity.name.count <= 32, "an identity read with the name \(identity.name)")
        fuzzCheck(KDEConnectIdentity.filterName(identity.name) == identity.name, "an identity read with an unfiltered name")
        if let port = identity.tcpPort { fuzzCheck(KDEConnectLimits.ports.contains(port), "an identity read with port \(port)") }
        fuzzCheck(!needsPort || identity.tcpPort != nil, "a UDP identity read without a port")
        for list in [identity.incomingCapabilities, identity.outgoingCapabilities] {
            fuzzCheck(list.count <= KDEConnectLimits.capabilities && list.allSatisfy { $0.hasPrefix("kdeconnect.") }, "capabilities read as \(list)")
        }
    }

    /// Identities as kdeconnect 22.12 and 25.12 write them, a pairing conversation (v8, with
    /// its timestamp), and a share with a payload.
    public static func seeds() throws -> [[UInt8]] {
        let v7 = #"{"id":"1765000000000","type":"kdeconnect.identity","body":{"deviceId":"1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d","deviceName":"kde-desk","deviceType":"desktop","protocolVersion":7,"incomingCapabilities":["kdeconnect.share.request","kdeconnect.clipboard"],"outgoingCapabilities":["kdeconnect.share.request"],"tcpPort":1716}}"#
        let v8 = #"{"id":1765000000000,"type":"kdeconnect.identity","body":{"deviceId":"_9f8e7d6c5b4a39281706f5e4d3c2b1a0-x","deviceName":"Pixel 9","deviceType":"smartphone","protocolVersion":8,"incomingCapabilities":[],"outgoingCapabilities":[],"tcpPort":1718,"targetDeviceId":"1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d","targetProtocolVersion":8}}"#
        let pair = #"{"id":1,"type":"kdeconnect.pair","body":{"pair":true,"timestamp":1765000000}}"#
        let unpair = #"{"id":2,"type":"kdeconnect.pair","body":{"pair":false}}"#
        let share = #"{"id":3,"type":"kdeconnect.share.request","body":{"filename":"a.txt","open":false},"payloadSize":5,"payloadTransferInfo":{"port":1739}}"#
        let url = #"{"id":4,"type":"kdeconnect.share.request","body":{"url":"https://example.org/"}}"#
        return [
            [1] + Array(v7.utf8),
            [0] + Array(v8.utf8),
            [0] + Array([v8, pair, pair, unpair].joined(separator: "\n").utf8),
            [3] + Array([v7, pair, unpair, pair].joined(separator: "\n").utf8),
            [0] + Array([share, url].joined(separator: "\n").utf8),
        ]
    }
}
