import HandoffCore
import Testing
@testable import HandoffKDEConnect

/// What the endpoint lets in before TLS, at an attacker's scale: thousands of UDP
/// identities from fake ids, connections that never say who they are, devices that are not
/// paired linking in numbers, a paired device coming back in an older version.
@Suite("KDE Connect admission")
struct KDEConnectAdmissionTests {
    static let t0 = Timestamp(seconds: 1_765_000_000, nanoseconds: 0)
    static func identity(_ id: KDEConnectDeviceID, version: Int = 8) -> KDEConnectIdentity {
        KDEConnectIdentity(deviceID: id, name: "x", type: .phone, protocolVersion: version, tcpPort: 1716)
    }

    @Test func aThousandFakeIdentitiesMakeAtMost42Dials() {
        let own = KDEConnectDeviceID.random()
        var admission = KDEConnectAdmission(own: own)
        var dials = 0
        for _ in 0..<1000 where admission.heard(Self.identity(.random()), pairedVersion: nil) == nil { dials += 1 }
        #expect(dials == 42 && admission.dialling.count == 42)
        // Connections that come in meanwhile are refused too: the pending budget is shared.
        do { let r = admission.accepted(1, at: Self.t0); #expect(!r) }
        // As dials end, room comes back.
        let first = admission.dialling.first!
        admission.dialEnded(first)
        do { let r = admission.heard(Self.identity(.random()), pairedVersion: nil); #expect(r == nil) }
    }

    @Test func oneDialPerDeviceAndNoneToOurselvesOrTheLinked() {
        let own = KDEConnectDeviceID.random(), peer = KDEConnectDeviceID.random()
        var admission = KDEConnectAdmission(own: own)
        do { let r = admission.heard(Self.identity(own), pairedVersion: nil); #expect(r == .ourselves) }
        do { let r = admission.heard(Self.identity(peer), pairedVersion: nil); #expect(r == nil) }
        do { let r = admission.heard(Self.identity(peer), pairedVersion: nil); #expect(r == .dialling, "a broadcast repeated while the dial runs") }
        admission.dialEnded(peer)
        do { let r = admission.linkUp(peer, version: 8, pairedVersion: nil); #expect(r == nil) }
        do { let r = admission.heard(Self.identity(peer), pairedVersion: nil); #expect(r == .linked) }
        admission.linkDown(peer)
        do { let r = admission.heard(Self.identity(peer), pairedVersion: nil); #expect(r == nil) }
    }

    @Test func aPairedDeviceMayNotComeBackOlder() {
        let peer = KDEConnectDeviceID.random()
        var admission = KDEConnectAdmission(own: .random())
        do { let r = admission.heard(Self.identity(peer, version: 7), pairedVersion: 8); #expect(r == .downgrade(from: 8, to: 7)) }
        do { let r = admission.linkUp(peer, version: 7, pairedVersion: 8); #expect(r == .downgrade(from: 8, to: 7)) }
        do { let r = admission.linkUp(peer, version: 8, pairedVersion: 7); #expect(r == nil, "newer is fine") }
    }

    @Test func connectionsThatSayNothingAreClosedAfterASecond() {
        var admission = KDEConnectAdmission(own: .random())
        for c in 0..<1000 { _ = admission.accepted(c, at: Self.t0.adding(nanoseconds: Int64(c) * 1_000_000)) }
        #expect(admission.waiting.count == 42, "the rest refused at once")
        admission.identified(3)
        #expect(admission.nextDeadline == Self.t0.adding(nanoseconds: 1_000_000_000))
        do { let r = admission.expired(at: Self.t0.adding(nanoseconds: 999_000_000)); #expect(r == []) }
        let late = admission.expired(at: Self.t0.adding(nanoseconds: 1_020_000_000))
        #expect(late == [0, 1, 2] + Array(4...20))
        do { let r = admission.expired(at: Self.t0.adding(nanoseconds: 2_000_000_000)); #expect(r.count == 21) }
        #expect(admission.waiting.isEmpty && admission.nextDeadline == nil)
        do { let r = admission.accepted(2000, at: Self.t0.adding(nanoseconds: 2_000_000_000)); #expect(r) }
    }

    @Test func atMost42DevicesThatAreNotPairedAreLinked() {
        var admission = KDEConnectAdmission(own: .random())
        let ids = (0..<100).map { _ in KDEConnectDeviceID.random() }
        let refused = ids.filter { admission.linkUp($0, version: 8, pairedVersion: nil) != nil }
        #expect(refused.count == 58)
        // A paired device still links; pairing one frees a place.
        do { let r = admission.linkUp(.random(), version: 8, pairedVersion: 8); #expect(r == nil) }
        admission.pairingChanged(ids[0], paired: true)
        do { let r = admission.linkUp(refused[0], version: 8, pairedVersion: nil); #expect(r == nil) }
        do { let r = admission.linkUp(refused[1], version: 8, pairedVersion: nil); #expect(r == .tooManyUnpaired) }
    }
}
