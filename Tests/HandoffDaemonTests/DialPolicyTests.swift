@testable import HandoffDaemon
import HandoffCore
import Testing

/// Whom the peer side dials, when it tries again, which link it keeps: without sockets.
@Suite("Dial policy")
struct DialPolicyTests {
    let policy = DialPolicy()
    let now = Timestamp(seconds: 1_000)

    func decide(_ s: DialPolicy.Situation) -> DialPolicy.Decision { policy.decide(s, at: now) }

    @Test func trustedDevicesAreDialledAndStrangersAndOurselvesNever() {
        #expect(decide(.init(identity: .trusted)) == .dial)
        #expect(decide(.init(identity: .trusted, linked: true)) == .skip)
        #expect(decide(.init(identity: .trusted, siblingBusy: true)) == .skip, "one dial per instance")
        #expect(decide(.init(identity: .stranger, trustedMissing: true, nonMemberMissing: true)) == .skip)
        #expect(decide(.init(identity: .ourselves, isStatic: true)) == .skip)
        // A static address is dialled whoever answered there last time.
        #expect(decide(.init(identity: .stranger, isStatic: true)) == .dial)
    }

    @Test func unknownInstancesOnlyWhileSomeoneTrustedIsMissing() {
        // A member's tag: worth a dial when any trusted device is missing, else not.
        #expect(decide(.init(identity: .unknown(tagChecksOut: true), trustedMissing: true)) == .dial)
        #expect(decide(.init(identity: .unknown(tagChecksOut: true))) == .skip, "everyone is here: a new name is no one of ours")
        // No tag of ours: only for a device trusted by ID that has no key yet.
        #expect(decide(.init(identity: .unknown(tagChecksOut: false), trustedMissing: true)) == .skip)
        #expect(decide(.init(identity: .unknown(tagChecksOut: false), trustedMissing: true, nonMemberMissing: true)) == .dial)
    }

    @Test func backoffDoublesUpToItsCeilingAndWaitsAreHonoured() {
        let s: [Int64] = (1...8).map { policy.backoff(failures: $0, isStatic: false) }
        #expect(s == [500_000_000, 1_000_000_000, 2_000_000_000, 4_000_000_000, 4_000_000_000, 4_000_000_000, 4_000_000_000, 4_000_000_000])
        #expect(policy.backoff(failures: 100, isStatic: true) == 30_000_000_000)
        #expect(policy.backoff(failures: 0, isStatic: false) == 500_000_000)
        let later = now.adding(nanoseconds: 2_000_000_000)
        #expect(decide(.init(identity: .trusted, notBefore: later)) == .wait(until: later))
        #expect(decide(.init(identity: .trusted, notBefore: now)) == .dial)
        #expect(policy.nextTry(after: .stranger, isStatic: false, at: now) == now.adding(nanoseconds: 300_000_000_000))
        #expect(policy.nextTry(after: .ourselves, isStatic: false, at: now) == nil)
        #expect(policy.nextTry(after: .failed(failures: 2), isStatic: false, at: now) == now.adding(nanoseconds: 1_000_000_000))
    }

    @Test func theSideThatYieldsWaitsForTheOthersDialThenDialsItself() {
        let found = now.adding(nanoseconds: -1_000_000_000)
        let due = found.adding(nanoseconds: policy.holdBack)
        // The other name sorts first: its dial gets a head start.
        #expect(decide(.init(identity: .unknown(tagChecksOut: true), trustedMissing: true, yields: true, heldBackSince: found)) == .wait(until: due))
        #expect(decide(.init(identity: .trusted, yields: true, heldBackSince: found)) == .wait(until: due))
        // Its dial came in and said which instance it is: nothing to do.
        #expect(decide(.init(identity: .trusted, linked: true, yields: true, heldBackSince: found)) == .skip)
        // No link by the deadline: dial after all, whoever should have.
        #expect(policy.decide(.init(identity: .trusted, yields: true, heldBackSince: found), at: due) == .dial)
        // The name sorts after ours: dial at once.
        #expect(decide(.init(identity: .trusted, heldBackSince: found)) == .dial)
        // ...unless a connection from its address is saying hello: its dial, waited for likewise.
        #expect(decide(.init(identity: .trusted, heldBackSince: found, inboundPending: true)) == .wait(until: due))
        #expect(policy.decide(.init(identity: .trusted, heldBackSince: found, inboundPending: true), at: due) == .dial)
        #expect(decide(.init(identity: .trusted, isStatic: true, heldBackSince: found, inboundPending: true)) == .dial)
        // A configured address is dialled at once: it may not be able to reach us.
        #expect(decide(.init(identity: .trusted, isStatic: true, yields: true, heldBackSince: found)) == .dial)
        // A backoff beyond the hold back still counts; the later of the two wins.
        let backedOff = due.adding(nanoseconds: 1_000_000_000)
        #expect(decide(.init(identity: .trusted, notBefore: backedOff, yields: true, heldBackSince: found)) == .wait(until: backedOff))
        #expect(decide(.init(identity: .trusted, notBefore: now.adding(nanoseconds: 1), yields: true, heldBackSince: found)) == .wait(until: due))
        // Strangers stay undialled either way.
        #expect(decide(.init(identity: .stranger, trustedMissing: true, yields: true, heldBackSince: found)) == .skip)
    }

    @Test func twoLinksToOnePeerLeaveTheOneTheSmallerIDDialled() {
        let small = DeviceID(bytes: Array(repeating: 1, count: 32)), large = DeviceID(bytes: Array(repeating: 9, count: 32))
        #expect(DialPolicy.keepsNewLink(existingDialledBy: large, newDialledBy: small))
        #expect(!DialPolicy.keepsNewLink(existingDialledBy: small, newDialledBy: large))
        #expect(DialPolicy.keepsNewLink(existingDialledBy: small, newDialledBy: small), "same end: the newer one (a restarted peer)")
    }
}
