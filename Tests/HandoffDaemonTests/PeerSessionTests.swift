@testable import HandoffDaemon
import HandoffCore
import HandoffControlAPI
import HandoffPeerProtocol
import Testing

/// What a connection becomes after the peer's hello, and what each message on a link asks
/// for: without sockets.
@Suite("Peer session")
struct PeerSessionTests {
    func hello(_ purpose: PeerHello.Purpose = .link, version: UInt16 = PeerHello.currentVersion, minimum: UInt16 = PeerHello.minimumVersion) -> PeerMessage {
        .hello(PeerHello(version: version, minimumVersion: minimum, deviceName: "desk", purpose: purpose, listenPort: 7443))
    }

    @Test func theFirstMessageMustBeACompatibleHello() {
        #expect(PeerSession.opening(first: .subscribe, ours: .link, dialled: true, peerTrusted: true)
                == .refuse(code: "expected-hello", message: "the first message must be a hello"))
        if case .refuse(let code, _) = PeerSession.opening(first: hello(version: 0, minimum: 0), ours: .link, dialled: false, peerTrusted: true) {
            #expect(code == "version-too-old")
        } else { Issue.record("an older peer must be refused") }
        if case .refuse(let code, let message) = PeerSession.opening(first: hello(version: 9, minimum: 7), ours: .link, dialled: false, peerTrusted: true) {
            #expect(code == "version-unknown" && message.contains("7"))
        } else { Issue.record("a peer that needs a newer version must be refused") }
        // A newer peer that still speaks ours is fine.
        #expect(PeerSession.opening(first: hello(version: 9, minimum: 1), ours: .link, dialled: false, peerTrusted: true) == .link(tuned: true))
    }

    @Test func pairingGoesAheadWithoutTrustAndNothingElseDoes() {
        #expect(PeerSession.opening(first: hello(.pair), ours: .pair, dialled: true, peerTrusted: false) == .pair(.initiator))
        #expect(PeerSession.opening(first: hello(.pair), ours: .link, dialled: false, peerTrusted: false) == .pair(.responder))
        // A peer we dialled to link cannot turn the connection into pairing.
        #expect(PeerSession.opening(first: hello(.pair), ours: .link, dialled: true, peerTrusted: false) == .close)
        for purpose in [PeerHello.Purpose.link, .stream] {
            #expect(PeerSession.opening(first: hello(purpose), ours: .link, dialled: false, peerTrusted: false) == .close, "\(purpose)")
        }
    }

    @Test func trustedPeersGetALinkOrAStream() {
        #expect(PeerSession.opening(first: hello(.link), ours: .link, dialled: true, peerTrusted: true) == .link(tuned: true))
        #expect(PeerSession.opening(first: hello(.stream), ours: .link, dialled: false, peerTrusted: true) == .stream)
        // Our stream dial: the peer's hello says link (it answers), nothing is tuned for a link.
        #expect(PeerSession.opening(first: hello(.link), ours: .stream, dialled: true, peerTrusted: true) == .link(tuned: false))
    }

    @Test func linkMessagesAskForTheRightThing() {
        let id = ActivityID.random()
        #expect(PeerSession.step(for: .subscribe, fetchesInFlight: 0) == .subscribe)
        #expect(PeerSession.step(for: .offer(nil), fetchesInFlight: 0) == .recordOffer(nil))
        #expect(PeerSession.step(for: .fetch(requestID: 7, activityID: id), fetchesInFlight: 3) == .answerFetch(request: 7, activity: id))
        #expect(PeerSession.step(for: .continued(activityID: id), fetchesInFlight: 0) == .noteContinued(id))
        #expect(PeerSession.step(for: .account([[1, 2]]), fetchesInFlight: 0) == .mergeAccount([[1, 2]]))
        #expect(PeerSession.step(for: .advertisementKey(generation: 2, key: [9]), fetchesInFlight: 0) == .considerKey(generation: 2, key: [9]))
        #expect(PeerSession.step(for: .error(code: "bye", message: "m"), fetchesInFlight: 0) == .peerClosing(code: "bye", message: "m"))
        #expect(PeerSession.step(for: .forgetHistory(persistentIdentifiers: ["n"]), fetchesInFlight: 0) == .forgetHistory(["n"]))
        #expect(PeerSession.step(for: .forgetHistory(persistentIdentifiers: nil), fetchesInFlight: 0, version: 4) == .forgetHistory(nil))
        // A link that speaks version 3 or older has no forgetting.
        guard case .violation = PeerSession.step(for: .forgetHistory(persistentIdentifiers: nil), fetchesInFlight: 0, version: 3) else {
            Issue.record("forgetHistory on a version 3 link must be a violation")
            return
        }
    }

    @Test func aPeerCannotHaveMoreThanFourFetchesAnswered() {
        let id = ActivityID.random()
        guard case .refuseFetch(let request, let code, _) = PeerSession.step(for: .fetch(requestID: 8, activityID: id), fetchesInFlight: PeerSession.maximumFetchesInFlight)
        else { Issue.record("the fifth fetch in flight must be refused"); return }
        #expect(request == 8 && code == "busy")
    }

    @Test func messagesOfOtherConnectionsAreViolations() {
        let id = ActivityID.random()
        for m: PeerMessage in [hello(), .streamOpen(activityID: id), .streamAccepted(length: nil), .stream(.end), .pairCommit([1]), .pairNonce([2]), .pairConfirm] {
            guard case .violation = PeerSession.step(for: m, fetchesInFlight: 0) else {
                Issue.record("\(m) on a link must be a protocol violation")
                continue
            }
        }
    }

    @Test func fetchFailuresUseTheWiresHyphens() {
        #expect(PeerSession.fetchFailure(HandoffError(.gone, code: "not_offered", message: "m")) == .failure(code: "not-offered", message: "m"))
    }
}

/// Which offer `continue` takes, and what it checks in the payload.
@Suite("Offer choice")
struct OfferChoiceTests {
    let now = Timestamp(seconds: 10_000)

    func offer(_ type: String = "org.example.edit", updated: Int64, expires: Int64? = nil) -> (Activity, ActivitySummary) {
        let a = Activity(id: .random(), activityType: type, title: "t", expirationDate: expires.map { Timestamp(seconds: $0) },
                         createdAt: Timestamp(seconds: updated), origin: DeviceRef(name: "desk"))
        return (a, ActivitySummary(a, payloadSize: 100))
    }

    @Test func theNewestOfferThatPassesTheFiltersIsTaken() throws {
        let (_, old) = offer(updated: 100), (_, new) = offer(updated: 200), (_, other) = offer("org.example.mail", updated: 300)
        let c = [OfferChoice.Candidate(peer: "a", offer: old, matchesFrom: true), .init(peer: "b", offer: new, matchesFrom: true),
                 .init(peer: "c", offer: other, matchesFrom: false)]
        #expect(try OfferChoice.choose(c, type: nil, id: nil, at: now).get().peer == "b", "c is not from the device asked for")
        #expect(try OfferChoice.choose(c, type: "org.example.edit", id: old.id.rawValue.uppercased(), at: now).get().peer == "a")
        #expect(OfferChoice.choose(c, type: "org.example.mail", id: nil, at: now).failure == .nothingOffered)
        #expect(OfferChoice.choose([OfferChoice.Candidate<String>](), type: nil, id: nil, at: now).failure == .nothingOffered)
    }

    @Test func onlyExpiredOffersSaySo() throws {
        let (_, gone) = offer(updated: 100, expires: 9_000), (_, live) = offer(updated: 50)
        #expect(OfferChoice.choose([.init(peer: 1, offer: gone, matchesFrom: true)], type: nil, id: nil, at: now).failure == .expired)
        #expect(try OfferChoice.choose([.init(peer: 1, offer: gone, matchesFrom: true), .init(peer: 2, offer: live, matchesFrom: true)],
                                       type: nil, id: nil, at: now).get().peer == 2)
    }

    @Test func aPayloadMustBeTheActivityOffered() {
        let (a, summary) = offer(updated: 100)
        let limits = ActivityLimits()
        #expect(OfferChoice.problem(with: a, offered: summary, limits: limits, at: now) == nil)
        let (b, _) = offer(updated: 100)
        #expect(OfferChoice.problem(with: b, offered: summary, limits: limits, at: now) == "a different activity than offered")
        var retyped = a
        retyped.activityType = "org.example.other"
        #expect(OfferChoice.problem(with: retyped, offered: summary, limits: limits, at: now)?.contains("instead of") == true)
        var incomplete = a
        incomplete.requiredUserInfoKeys = ["cursor"]
        #expect(OfferChoice.problem(with: incomplete, offered: summary, limits: limits, at: now)?.contains("cursor") == true)
        var stale = a
        stale.expirationDate = Timestamp(seconds: 9_999)
        #expect(OfferChoice.problem(with: stale, offered: summary, limits: limits, at: now) == "it has expired")
    }

    @Test func fetchFailuresMapToKinds() {
        #expect(OfferChoice.failure(code: "timeout", message: "m") == HandoffError(.peerTimedOut, code: "timeout", message: "m"))
        #expect(OfferChoice.failure(code: "not-offered", message: "m") == HandoffError(.gone, code: "not_offered", message: "m"))
        #expect(OfferChoice.failure(code: "peer-gone", message: "m").kind == .peerFailed)
        #expect(OfferChoice.failure(code: "invalidated", message: "m").kind == .peerFailed, "the origin's own failures come as 502 (LocalAPI §3)")
    }
}

extension Result {
    var failure: Failure? { if case .failure(let f) = self { f } else { nil } }
}
