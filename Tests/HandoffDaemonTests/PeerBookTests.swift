import HandoffControlAPI
import HandoffCore
import HandoffPeerProtocol
import Testing
@testable import HandoffDaemon

/// Links, subscriptions, offers, strangers and streams as the peer side meets them, with
/// the time given: no sockets.
@Suite("Peer book")
struct PeerBookTests {
    static let t0 = Timestamp(seconds: 1_800_000_000, nanoseconds: 0)
    static let us = DeviceID(bytes: Array(repeating: 5, count: 32))
    static let peer = DeviceID(bytes: Array(repeating: 7, count: 32))
    static let other = DeviceID(bytes: Array(repeating: 8, count: 32))

    static func at(_ seconds: Int64) -> Timestamp { t0.adding(nanoseconds: seconds * 1_000_000_000) }

    final class Link: BookedLink {
        let deviceID: DeviceID, deviceName: String, dialledBy: DeviceID, remoteAddress: String
        init(_ id: DeviceID, name: String = "desk", dialledBy: DeviceID, address: String = "10.0.0.2") {
            (deviceID, deviceName, self.dialledBy, remoteAddress) = (id, name, dialledBy, address)
        }
    }

    /// Actions as text, to compare whole lists: "close desk@10.0.0.2", "send desk subscribe", "emit …".
    static func describe(_ actions: [PeerBook<Link>.Action]?) -> [String]? {
        actions?.map {
            switch $0 {
            case .close(let l): return "close \(l.deviceName)@\(l.remoteAddress)"
            case .send(let l, .subscribe): return "send \(l.deviceName)@\(l.remoteAddress) subscribe"
            case .send(let l, .offer(let o)): return "send \(l.deviceName)@\(l.remoteAddress) offer \(o?.title ?? "none")"
            case .send(let l, let m): return "send \(l.deviceName) \(m)"
            case .emit(.peerConnected(let d)): return "emit connected \(d.name)"
            case .emit(.peerDisconnected(let d, _)): return "emit disconnected \(d.name)"
            case .emit(.peerOffer(let d, let o)): return "emit offer \(d.name) \(o?.title ?? "none")"
            case .emit(let e): return "emit \(e)"
            }
        }
    }

    static func offer(_ title: String, expires: Timestamp? = nil) -> ActivitySummary {
        let a = Activity(id: .random(), activityType: "org.example.edit", title: title, expirationDate: expires, createdAt: t0,
                         origin: DeviceRef(name: "desk"))
        return ActivitySummary(a, payloadSize: 10)
    }

    @Test func aLinkIsAttachedSubscribedAndAnnouncedOnce() {
        var book = PeerBook<Link>()
        let link = Link(Self.peer, dialledBy: Self.us)
        #expect(Self.describe(book.attach(link, trusted: true, trustedName: "Desk", at: Self.t0))
                == ["send desk@10.0.0.2 subscribe", "emit connected desk"])
        #expect(book.isCurrent(link) && book.devices[Self.peer]?.name == "Desk" && book.devices[Self.peer]?.lastSeen == Self.t0)
        // The same end dials again (the peer restarted; our old socket still looks open):
        // the new link replaces the old, and nobody hears the peer went away.
        let again = Link(Self.peer, dialledBy: Self.us, address: "10.0.0.3")
        #expect(Self.describe(book.attach(again, trusted: true, trustedName: nil, at: Self.at(1)))
                == ["close desk@10.0.0.2", "send desk@10.0.0.3 subscribe"])
        #expect(!book.isCurrent(link) && book.isCurrent(again))
        #expect(book.detach(link, at: Self.at(2)).isEmpty, "the replaced link's end changes nothing")
        #expect(book.links[Self.peer] === again)
        #expect(book.devices[Self.peer]?.addresses == ["10.0.0.2", "10.0.0.3"])
    }

    @Test func ofTwoLinksDialledFromOppositeEndsBothSidesKeepTheSmallerIDs() {
        // us (5…) < peer (7…): the link we dialled stays, whichever came first.
        var book = PeerBook<Link>()
        let ours = Link(Self.peer, dialledBy: Self.us), theirs = Link(Self.peer, dialledBy: Self.peer, address: "10.0.0.9")
        #expect(book.attach(ours, trusted: true, trustedName: nil, at: Self.t0) != nil)
        #expect(book.attach(theirs, trusted: true, trustedName: nil, at: Self.at(1)) == nil, "theirs is dropped")
        #expect(book.isCurrent(ours))
        var other = PeerBook<Link>()
        #expect(other.attach(theirs, trusted: true, trustedName: nil, at: Self.t0) != nil)
        #expect(Self.describe(other.attach(ours, trusted: true, trustedName: nil, at: Self.at(1)))
                == ["close desk@10.0.0.9", "send desk@10.0.0.2 subscribe"])
    }

    @Test func aLinkWhoseTrustWasWithdrawnDuringItsHelloIsDropped() {
        var book = PeerBook<Link>()
        let link = Link(Self.peer, dialledBy: Self.us)
        #expect(book.attach(link, trusted: false, trustedName: nil, at: Self.t0) == nil)
        #expect(book.links.isEmpty && book.devices.isEmpty)
        _ = book.attach(link, trusted: true, trustedName: nil, at: Self.t0)
        #expect(Self.describe(book.untrusted(Self.peer)) == ["close desk@10.0.0.2"])
        #expect(book.untrusted(Self.other).isEmpty)
    }

    @Test func offersGoToSubscribersAndComeFromCurrentLinksOnly() {
        var book = PeerBook<Link>()
        let desk = Link(Self.peer, dialledBy: Self.us), laptop = Link(Self.other, name: "laptop", dialledBy: Self.us, address: "10.0.0.8")
        _ = book.attach(desk, trusted: true, trustedName: nil, at: Self.t0)
        _ = book.attach(laptop, trusted: true, trustedName: nil, at: Self.t0)
        #expect(Self.describe(book.offerChanged(OfferedActivity(summary: Self.offer("draft")))) == [], "nobody subscribed yet")
        #expect(Self.describe(book.subscribe(desk)) == ["send desk@10.0.0.2 offer draft"], "a subscriber gets the offer at once")
        #expect(Self.describe(book.offerChanged(nil)) == ["send desk@10.0.0.2 offer none"])
        #expect(Self.describe(book.received(Self.offer("mail"), from: laptop)) == ["emit offer laptop mail"])
        #expect(book.offers(at: Self.at(1)).map(\.offer.title) == ["mail"])
        // A replaced link's late messages change nothing.
        let stale = Link(Self.other, name: "laptop", dialledBy: Self.peer)
        #expect(book.received(Self.offer("old"), from: stale).isEmpty && book.subscribe(stale).isEmpty)
        // The link ends: its offer goes with it, said before the disconnection.
        #expect(Self.describe(book.detach(laptop, at: Self.at(5))) == ["emit offer laptop none", "emit disconnected laptop"])
        #expect(book.offers(at: Self.at(5)).isEmpty && book.devices[Self.other]?.lastSeen == Self.at(5))
        #expect(Self.describe(book.detach(desk, at: Self.at(6))) == ["emit disconnected desk"], "no offer: nothing to withdraw")
        #expect(Self.describe(book.offerChanged(OfferedActivity(summary: Self.offer("x")))) == [], "an ended link is no longer a subscriber")
    }

    @Test func anOfferForOneWorkstationReachesItAlone() {
        var book = PeerBook<Link>()
        let desk = Link(Self.peer, dialledBy: Self.us), laptop = Link(Self.other, name: "laptop", dialledBy: Self.us, address: "10.0.0.8")
        for l in [desk, laptop] {
            _ = book.attach(l, trusted: true, trustedName: nil, at: Self.t0)
            _ = book.subscribe(l)
        }
        let forLaptop = OfferedActivity(summary: Self.offer("private"), targets: [Self.other])
        #expect(Self.describe(book.offerChanged(forLaptop)) == ["send desk@10.0.0.2 offer none", "send laptop@10.0.0.8 offer private"],
                "the others hear nothing is offered (they may have had the one before)")
        let again = Link(Self.peer, dialledBy: Self.us, address: "10.0.0.3")
        _ = book.attach(again, trusted: true, trustedName: nil, at: Self.at(1))
        #expect(Self.describe(book.subscribe(again)) == ["send desk@10.0.0.3 offer none"], "nor when they subscribe anew")
    }

    @Test func anExpiredOfferIsNotListed() {
        var book = PeerBook<Link>()
        let desk = Link(Self.peer, dialledBy: Self.us)
        _ = book.attach(desk, trusted: true, trustedName: nil, at: Self.t0)
        _ = book.received(Self.offer("brief", expires: Self.at(10)), from: desk)
        #expect(book.offers(at: Self.at(9)).count == 1)
        #expect(book.offers(at: Self.at(10)).isEmpty)
    }

    @Test func onlyTheLatestStrangersAreRemembered() {
        var book = PeerBook<Link>()
        let desk = Link(Self.peer, dialledBy: Self.us)
        _ = book.attach(desk, trusted: true, trustedName: nil, at: Self.t0)
        let strangers = (0..<200).map { i in DeviceID(bytes: [UInt8(i)] + Array(repeating: 1, count: 31)) }
        for (i, s) in strangers.enumerated() {
            book.sawStranger(s, name: nil, address: "10.1.0.\(i % 250)", isTrusted: { $0 == Self.peer }, at: Self.at(Int64(i)))
        }
        #expect(book.devices.count == PeerBook<Link>.rememberedStrangers + 1, "64 strangers and the trusted peer")
        #expect(book.devices[Self.peer] != nil && book.devices[strangers[199]] != nil && book.devices[strangers[135]] == nil)
        // Seen again: updated, evicting nobody; the name it gives now fills the one it did not give.
        book.sawStranger(strangers[199], name: "evil", address: "10.9.9.9", isTrusted: { $0 == Self.peer }, at: Self.at(300))
        #expect(book.devices.count == 65 && book.devices[strangers[199]]?.name == "evil")
        #expect(book.devices[strangers[199]]?.addresses == ["10.1.0.199", "10.9.9.9"])
    }

    @Test func streamsAreAskedOfTheWorkstationAnActivityCameFrom() {
        var book = PeerBook<Link>()
        let desk = Link(Self.peer, dialledBy: Self.us), laptop = Link(Self.other, name: "laptop", dialledBy: Self.us)
        _ = book.attach(desk, trusted: true, trustedName: nil, at: Self.t0)
        _ = book.attach(laptop, trusted: true, trustedName: nil, at: Self.t0)
        let offered = Self.offer("doc")
        _ = book.received(offered, from: laptop)
        #expect(book.origin(of: offered.id) === laptop, "whoever offers it")
        book.continued(offered.id, from: Self.peer)
        #expect(book.origin(of: offered.id) === desk, "where it was continued from wins")
        _ = book.detach(desk, at: Self.at(1))
        #expect(book.origin(of: offered.id) === laptop, "its origin is gone: the one still offering it")
        // Only the latest continuations are kept.
        let ids = (0..<100).map { _ in ActivityID.random() }
        for id in ids { book.continued(id, from: Self.other) }
        #expect(book.origin(of: ids[99]) === laptop && book.origin(of: ids[0]) == nil)
    }
}

/// A link's fetch bookkeeping: answers matched to requests once, and a close that tells
/// every waiter.
@Suite("Fetch requests")
struct FetchRequestsTests {
    @Test func eachAnswerReachesItsWaiterOnce() {
        var fetches = FetchRequests<String>()
        let a = fetches.open("a"), b = fetches.open("b")
        #expect(a == 1 && b == 2)
        #expect(fetches.resolve(2) == "b")
        #expect(fetches.resolve(2) == nil, "a second answer to one request is ignored")
        #expect(fetches.resolve(99) == nil, "so is an answer to a request never sent")
        #expect(fetches.update(1, "a with timer") && !fetches.update(2, "late"))
        #expect(fetches.close() == ["a with timer"] && fetches.closed)
        #expect(fetches.open("c") == nil, "nothing opens on a closed link")
        #expect(fetches.waiting == 0)
    }

    @Test func answeringIsCountedAndNeverBelowZero() {
        var fetches = FetchRequests<Int>()
        fetches.beginAnswering(); fetches.beginAnswering(); fetches.endAnswering()
        #expect(fetches.answering == 1)
        fetches.endAnswering(); fetches.endAnswering()
        #expect(fetches.answering == 0)
    }
}

/// Each peer's share of continuation streams, each way.
@Suite("Stream shares")
struct StreamSharesTests {
    static let peer = DeviceID(bytes: Array(repeating: 1, count: 32))
    static let other = DeviceID(bytes: Array(repeating: 2, count: 32))

    @Test func eachPeerHasItsShareOfStreamsEachWay() {
        var shares = StreamShares(maximumPerPeer: 2)
        var opened: [Bool] = []
        func begin(_ peer: DeviceID, outgoing: Bool) { opened.append(shares.begin(peer, outgoing: outgoing)) }
        begin(Self.peer, outgoing: true); begin(Self.peer, outgoing: true)
        begin(Self.peer, outgoing: true)  // outgoing share used up
        begin(Self.peer, outgoing: false)  // incoming counted apart
        begin(Self.other, outgoing: true)  // and each peer apart
        shares.end(Self.peer, outgoing: true)
        begin(Self.peer, outgoing: true)
        #expect(opened == [true, true, false, true, true, true])
        shares.end(Self.peer, outgoing: true); shares.end(Self.peer, outgoing: true); shares.end(Self.peer, outgoing: false)
        #expect(shares.open(with: Self.peer) == (0, 0))
        shares.end(Self.peer, outgoing: true)
        #expect(shares.open(with: Self.peer) == (0, 0), "an end without a beginning changes nothing")
    }
}
