@testable import HandoffDaemon
import HandoffCore
import Testing

private func device(_ n: UInt8) -> DeviceID { DeviceID(bytes: Array(repeating: n, count: 32)) }
private func nonce(_ n: UInt8) -> [UInt8] { Array(repeating: n, count: 32) }

/// Runs the exchange between an initiator and a responder; both codes.
private func run(_ i: inout PairingExchange, _ r: inout PairingExchange) throws -> (String?, String?) {
    var toInitiator = r.opening(), toResponder = i.opening()
    while !toInitiator.isEmpty || !toResponder.isEmpty {
        let a = toInitiator, b = toResponder
        toInitiator = []
        toResponder = []
        for m in a { toResponder += try i.receive(m) }
        for m in b { toInitiator += try r.receive(m) }
    }
    return (i.code, r.code)
}

/// The code exchange and the pairing window, without sockets (time is passed in).
@Suite("Pairing")
struct PairingTests {
    let a = device(1), b = device(2), m = device(9)

    @Test func honestSidesShowTheSameCode() throws {
        var i = PairingExchange(role: .initiator, own: a, peer: b)
        var r = PairingExchange(role: .responder, own: b, peer: a)
        let (ci, cr) = try run(&i, &r)
        #expect(ci != nil && ci == cr)
        #expect(ci?.count == 6 && ci?.allSatisfy(\.isNumber) == true)
        // Fresh nonces: another run gives another code (all but surely).
        var i2 = PairingExchange(role: .initiator, own: a, peer: b), r2 = PairingExchange(role: .responder, own: b, peer: a)
        #expect(try run(&i2, &r2).0 != ci)
    }

    /// A relay that terminates TLS with its own certificate: each side binds the
    /// certificate it saw, so the two legs' codes differ unless the relay's nonces happen
    /// to land on the same code; and it must fix its nonce on the a-leg before it learns
    /// anything of b's. Over many relays, a match is as rare as a random guess.
    @Test func aRelayWithItsOwnCertificateGetsDifferentCodes() throws {
        var matches = 0
        for _ in 0..<2000 {
            // a dials the relay (a: initiator, relay: responder with its own nonce)...
            var aSide = PairingExchange(role: .initiator, own: a, peer: m)
            var relayAsResponder = PairingExchange(role: .responder, own: m, peer: a)
            // ...and the relay dials b.
            var relayAsInitiator = PairingExchange(role: .initiator, own: m, peer: b)
            var bSide = PairingExchange(role: .responder, own: b, peer: m)
            let (codeA, _) = try run(&aSide, &relayAsResponder)
            let (_, codeB) = try run(&relayAsInitiator, &bSide)
            if codeA == codeB { matches += 1 }
        }
        #expect(matches <= 1, "\(matches) of 2000 relays got matching codes")
    }

    @Test func aResponderThatChangesItsNonceIsCaught() throws {
        var i = PairingExchange(role: .initiator, own: a, peer: b)
        let honest = PairingExchange(role: .responder, own: b, peer: a, nonce: nonce(7))
        let sent = try i.receive(honest.opening()[0])
        #expect(sent.count == 1)
        // The reveal is not the nonce committed to.
        #expect(throws: PairingExchange.Failure.self) { try i.receive(.pairNonce(nonce(8))) }
        #expect(i.code == nil)
    }

    @Test func messagesOutOfTurnAreRefused() throws {
        var r = PairingExchange(role: .responder, own: b, peer: a)
        #expect(throws: PairingExchange.Failure.self) { try r.receive(.pairCommit(nonce(1))) }
        var i = PairingExchange(role: .initiator, own: a, peer: b)
        #expect(throws: PairingExchange.Failure.self) { try i.receive(.pairNonce(nonce(1))) }  // before the commitment
        var r2 = PairingExchange(role: .responder, own: b, peer: a)
        _ = try r2.receive(.pairNonce(nonce(1)))
        #expect(throws: PairingExchange.Failure.self) { try r2.receive(.pairNonce(nonce(2))) }  // a second nonce
    }

    @Test func codeIsSixDigitsWithLeadingZeros() {
        for n in 0..<200 {
            let c = PairingCode.code(initiator: a, responder: b, initiatorNonce: nonce(UInt8(n)), responderNonce: nonce(3))
            #expect(c.count == 6 && c.allSatisfy(\.isNumber))
        }
    }

    // MARK: - The window

    let t0 = Timestamp(seconds: 1_000_000)
    func at(_ s: Int64) -> Timestamp { t0.adding(nanoseconds: s * 1_000_000_000) }

    @Test func bothConfirmationsTrustInEitherOrder() {
        for hereFirst in [true, false] {
            var w = PairingWindow()
            w.open(at: t0, tag: "x")
            let id = w.begin(peer: b, name: "desk", address: "10.0.0.2", at: at(1))!
            #expect(w.status(at: at(1)).state == .exchanging)
            #expect(w.confirmHere("123456") == .nothingToConfirm)  // no code yet
            w.codeReady(id, code: "123456")
            #expect(w.status(at: at(2)).state == .code && w.status(at: at(2)).code == "123456")
            if hereFirst {
                #expect(w.confirmHere("123456") == .confirmed(trustNow: false))
                #expect(w.confirmedThere(id) == true)
            } else {
                #expect(w.confirmedThere(id) == false)
                #expect(w.confirmHere("123456") == .confirmed(trustNow: true))
            }
            w.succeeded(id)
            #expect(w.status(at: at(3)).state == .paired)
            #expect(!w.isOpen(at: at(3)))
        }
    }

    @Test func oneAttemptAtATimeAndAWrongCodeEndsIt() {
        var w = PairingWindow()
        #expect(w.begin(peer: b, name: "", address: "", at: t0) == nil, "closed: no attempt")
        w.open(at: t0, tag: "x")
        let id = w.begin(peer: b, name: "desk", address: "", at: at(1))!
        #expect(w.begin(peer: m, name: "evil", address: "", at: at(1)) == nil, "one attempt at a time")
        w.codeReady(id, code: "111111")
        #expect(w.confirmHere("222222") == .mismatch)
        w.attemptEnded(id, reason: .otherStopped("codes differ"))
        #expect(w.lastFailure == .otherStopped("codes differ"))
        #expect(w.status(at: at(2)).state == .failed && w.status(at: at(2)).message == "the other workstation stopped: codes differ")
        #expect(w.isOpen(at: at(2)), "the window stays open for another attempt")
        #expect(w.begin(peer: b, name: "desk", address: "", at: at(3)) != nil)
    }

    @Test func attemptsAreLimitedAndTheWindowExpires() {
        var w = PairingWindow()
        w.open(at: t0, tag: "x")
        // Connections that never get to a code do not use the window up...
        for n in 0..<10 {
            let id = w.begin(peer: m, name: "evil", address: "", at: at(Int64(n)))!
            w.attemptEnded(id, reason: .otherEnded)
        }
        #expect(w.isOpen(at: at(10)))
        // ...attempts that do, do.
        for n in 0..<PairingWindow.maximumAttempts {
            let id = w.begin(peer: m, name: "evil", address: "", at: at(Int64(n)))!
            w.codeReady(id, code: "000000")
            w.attemptEnded(id, reason: .otherEnded)
        }
        #expect(!w.isOpen(at: at(10)), "too many attempts close the window")
        #expect(w.begin(peer: b, name: "desk", address: "", at: at(10)) == nil)
        #expect(w.lastFailure == .tooManyAttempts(PairingWindow.maximumAttempts))
        #expect(w.status(at: at(10)).message == "5 attempts failed; run `handoffctl pair` again")

        var e = PairingWindow()
        e.open(at: t0, tag: "y")
        e.open(at: at(60), tag: "z")  // joining does not extend or retag it
        #expect(e.tag == "y")
        e.expire(at: at(119))
        #expect(e.isOpen(at: at(119)))
        e.expire(at: at(120))
        #expect(!e.isOpen(at: at(120)) && e.status(at: at(120)).state == .failed)
        #expect(e.lastFailure == .nobodyPaired, "nobody began an attempt")
        #expect(e.begin(peer: b, name: "", address: "", at: at(121)) == nil)

        // Ran out mid-attempt: a different reason; cancelling says so.
        var mid = PairingWindow()
        mid.open(at: t0, tag: "m")
        _ = mid.begin(peer: b, name: "desk", address: "", at: at(1))
        mid.expire(at: at(120))
        #expect(mid.lastFailure == .timeRanOut)
        var cancelled = PairingWindow()
        cancelled.open(at: t0, tag: "c")
        cancelled.close(.cancelled)
        #expect(cancelled.status(at: at(1)).message == "cancelled")
    }
}

/// Which pairing advertisements are dialled and which announced, without Avahi.
@Suite("Pairing discovery")
struct PairingDiscoveryTests {
    @Test func theSmallerTagDialsOncePerTagAndTriesAnotherAddressAfterAFailure() {
        var finder = PairingDiscovery()
        #expect(finder.found(tag: "b", address: "10.0.0.2", port: 9, ours: "c", attemptRunning: false) == nil, "theirs is smaller: they dial")
        #expect(finder.found(tag: "d", address: "10.0.0.2", port: 9, ours: "c", attemptRunning: true) == nil, "an attempt runs already")
        #expect(finder.found(tag: "d", address: "10.0.0.2", port: 9, ours: "c", attemptRunning: false) == .dial(address: "10.0.0.2", port: 9, tag: "d"))
        #expect(finder.found(tag: "d", address: "fe80::2%2", port: 9, ours: "c", attemptRunning: false) == nil, "one dial per tag at a time")
        finder.dialFailed(tag: "d", address: "10.0.0.2")
        #expect(finder.found(tag: "d", address: "10.0.0.2", port: 9, ours: "c", attemptRunning: false) == nil, "not the address that failed")
        #expect(finder.found(tag: "d", address: "fe80::2%2", port: 9, ours: "c", attemptRunning: false) == .dial(address: "fe80::2%2", port: 9, tag: "d"))
        #expect(finder.found(tag: "c", address: "10.0.0.3", port: 9, ours: "c", attemptRunning: false) == nil, "our own tag")
        finder.windowOpened()
        #expect(finder.found(tag: "d", address: "10.0.0.2", port: 9, ours: "a0", attemptRunning: false) == .dial(address: "10.0.0.2", port: 9, tag: "d"),
                "a new window forgets what failed")
    }

    @Test func withOurWindowClosedEachTagIsAnnouncedOnce() {
        var finder = PairingDiscovery()
        #expect(finder.found(tag: "x", address: "10.0.0.2", port: 9, ours: nil, attemptRunning: false) == .announce(tag: "x"))
        #expect(finder.found(tag: "x", address: "10.0.0.9", port: 9, ours: nil, attemptRunning: false) == nil)
        #expect(finder.found(tag: "", address: "10.0.0.9", port: 9, ours: nil, attemptRunning: false) == nil, "an empty tag is no pairing")
        // Thousands of tags (a hostile network): remembered ones stay bounded, and the
        // latest are still announced once.
        var announced = 0
        for i in 0..<5000 where finder.found(tag: "t\(i)", address: "10.0.0.2", port: 9, ours: nil, attemptRunning: false) != nil { announced += 1 }
        #expect(announced == 5000)
    }
}

@Suite("A pairing dial that ends before its exchange")
struct PairingDialEndTests {
    /// What the user is told, and whether the address they gave is dialled again: only
    /// while the other side may still become ready (not pairing yet, not up yet).
    @Test func eachEarlyEndSaysWhyAndOnlyNotReadyYetIsDialledAgain() {
        #expect(PairingFailure(PeerService.EarlyEnd.failed(.tlsFailed)) == .notPairingThere)
        #expect(PairingFailure.notPairingThere.description.contains("is not pairing now"))
        #expect(PairingFailure(PeerService.EarlyEnd.refused("removed")) == .otherStopped("removed"))
        #expect(PairingFailure(PeerService.EarlyEnd.incompatible("too old")) == .otherStopped("too old"))
        #expect(PairingFailure(PeerService.EarlyEnd.closedBeforeHello) == .otherEnded)
        #expect(PairingFailure(PeerService.EarlyEnd.failed(.noAnswer)) == .connectionFailed(DialFailure.noAnswer.description))
        #expect(PairingFailure.notPairingThere.isWorthRedialling)
        #expect(PairingFailure.unreachable(host: "h", port: 1, error: "refused").isWorthRedialling)
        for final in [PairingFailure.otherStopped("removed"), .otherEnded, .codeMismatch(given: "1", shown: "2"), .cancelled,
                      .exchangeFailed(.init(code: "x", description: "y")), .connectionFailed("z")] {
            #expect(!final.isWorthRedialling, "\(final)")
        }
    }
}
