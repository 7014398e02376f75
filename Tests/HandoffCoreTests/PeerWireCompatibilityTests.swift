import HandoffCore
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOEmbedded
import Testing

// MARK: - Version negotiation

@Suite("PeerWire hello compatibility")
struct PeerWireCompatibilityTests {
    let ours = PeerHello(version: 3, minimumVersion: 2, deviceName: "us")

    private func peer(_ version: UInt16, _ minimum: UInt16) -> PeerHello {
        PeerHello(version: version, minimumVersion: minimum, deviceName: "them")
    }

    @Test func sameVersions() {
        #expect(peer(3, 2).compatibility(with: ours) == .compatible(3))
        let current = PeerHello(deviceName: "a")
        #expect(PeerHello(deviceName: "b").compatibility(with: current) == .compatible(PeerHello.currentVersion))
        #expect(peer(7, 7).compatibility(with: peer(7, 7)) == .compatible(7))
    }

    @Test func peerTooOld() {
        #expect(peer(1, 1).compatibility(with: ours) == .peerTooOld)
        #expect(peer(1, 0).compatibility(with: ours) == .peerTooOld)
        #expect(peer(0, 0).compatibility(with: ours) == .peerTooOld)
        // The other side sees us as too new for it.
        #expect(ours.compatibility(with: peer(1, 1)) == .peerTooNew)
    }

    @Test func peerTooNew() {
        #expect(peer(5, 4).compatibility(with: ours) == .peerTooNew)
        #expect(peer(UInt16.max, UInt16.max).compatibility(with: ours) == .peerTooNew)
        #expect(ours.compatibility(with: peer(5, 4)) == .peerTooOld)
    }

    @Test func overlappingRanges() {
        #expect(peer(5, 3).compatibility(with: ours) == .compatible(3))
        #expect(peer(5, 1).compatibility(with: ours) == .compatible(3))
        #expect(peer(2, 1).compatibility(with: ours) == .compatible(2))
        #expect(peer(2, 2).compatibility(with: ours) == .compatible(2))
        #expect(peer(UInt16.max, 0).compatibility(with: ours) == .compatible(3))
        // Both sides agree on the version.
        for p in [peer(5, 3), peer(5, 1), peer(2, 1), peer(3, 3), peer(3, 1)] {
            let theirs = ours.compatibility(with: p)
            #expect(p.compatibility(with: ours) == theirs, "\(p.version)/\(p.minimumVersion)")
            #expect(theirs == .compatible(min(p.version, ours.version)))
        }
    }

    @Test func exhaustiveSmallRanges() {
        // Against a brute-force definition: the highest version in both ranges.
        for ov in UInt16(0)...5 {
            for om in UInt16(0)...ov {
                let us = peer(ov, om)
                for pv in UInt16(0)...5 {
                    for pm in UInt16(0)...pv {
                        let got = peer(pv, pm).compatibility(with: us)
                        if max(om, pm) <= min(ov, pv) {
                            #expect(got == .compatible(min(ov, pv)), "us \(ov)/\(om) peer \(pv)/\(pm)")
                        } else if pv < om {
                            #expect(got == .peerTooOld, "us \(ov)/\(om) peer \(pv)/\(pm)")
                        } else {
                            #expect(got == .peerTooNew, "us \(ov)/\(om) peer \(pv)/\(pm)")
                        }
                    }
                }
            }
        }
    }
}
