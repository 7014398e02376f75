import HandoffAvahi
import HandoffCore
import Testing
@testable import HandoffDaemon

/// Whom to dial and when, as the peer side meets it (found, dial ended, link up or down,
/// trust changed), with the time and the facts given: no sockets, no Avahi, no waiting.
@Suite("Dial book")
struct DialBookTests {
    static let t0 = Timestamp(seconds: 1_800_000_000, nanoseconds: 0)
    static let peer = DeviceID(bytes: Array(repeating: 7, count: 32))
    static let stranger = DeviceID(bytes: Array(repeating: 9, count: 32))

    static func at(_ ms: Int64) -> Timestamp { t0.adding(nanoseconds: ms * 1_000_000) }

    static func service(_ name: String, address: String = "10.0.0.2", ipv6: Bool = false) -> DiscoveredService {
        DiscoveredService(key: ServiceKey(interfaceIndex: 2, ipv6: ipv6, name: name, domain: "local"), hostName: name + ".local",
                          address: address, port: 4242, txt: ["v": "1", "h": "aa", "t": "member"])
    }

    /// A workstation that trusts `peer` and is linked to nothing; our advertisement is "m".
    static func facts(linked: Set<DeviceID> = [], canWatch: Bool = false) -> DialFacts {
        DialFacts(isTrusted: { $0 == peer }, isLinked: { linked.contains($0) }, isMember: { $0 == "member" },
                  trustedMissing: !linked.contains(peer), nonMemberMissing: false, everyTrustedLinked: linked.contains(peer),
                  advertisedName: "m", canWatch: canWatch)
    }

    @Test func aMemberFoundIsDialledAndAFailedDialBacksOff() {
        var book = DialBook(policy: DialPolicy())
        let s = Self.service("z")  // sorts after ours: we dial
        #expect(book.found(s, linkedAs: nil, Self.facts(), at: Self.t0) == [.dial(s.key, address: "10.0.0.2", port: 4242)])
        #expect(book.consider(s.key, Self.facts(), at: Self.at(1)) == [], "one dial at a time")
        let after = book.dialFinished(s.key, verdict: .trusted(Self.peer), failure: .refused, Self.facts(), at: Self.at(100))
        #expect(after == [.retry(s.key, afterNanoseconds: 500_000_000)], "0.5 s after the first failure")
        #expect(book[s.key]?.lastError == .refused && book[s.key]?.deviceID == Self.peer)
        #expect(book.retryDue(s.key, Self.facts(), at: Self.at(600)) == [.dial(s.key, address: "10.0.0.2", port: 4242)])
        let again = book.dialFinished(s.key, verdict: .trusted(Self.peer), failure: .noAnswer, Self.facts(), at: Self.at(700))
        #expect(again == [.retry(s.key, afterNanoseconds: 1_000_000_000)], "doubling")
    }

    @Test func theSideThatYieldsHoldsBackForTheOthersDial() {
        var book = DialBook(policy: DialPolicy())
        let s = Self.service("a")  // sorts before ours ("m"): it dials us; we wait 3 s
        #expect(book.found(s, linkedAs: nil, Self.facts(canWatch: true), at: Self.t0) == [.retry(s.key, afterNanoseconds: 3_000_000_000)])
        #expect(book[s.key]?.holdingBack == true && book[s.key]?.watched == false, "no resolver while holding back")
        // Its link came: nothing to dial when the wait ends.
        book.linked(Self.peer, dialled: nil, advertises: { $0 == s.key })
        #expect(book.retryDue(s.key, Self.facts(linked: [Self.peer], canWatch: true), at: Self.at(3000)) == [])
        // The link ends: the hold back starts over, and then we dial.
        #expect(book.unlinked(Self.peer, Self.facts(canWatch: true), at: Self.at(5000)) == [.retry(s.key, afterNanoseconds: 0)])
        #expect(book.retryDue(s.key, Self.facts(canWatch: true), at: Self.at(5000)) == [.retry(s.key, afterNanoseconds: 3_000_000_000)])
        #expect(book.retryDue(s.key, Self.facts(canWatch: true), at: Self.at(8000)) == [.dial(s.key, address: "10.0.0.2", port: 4242)])
    }

    /// PeerProtocol.md §10.4: a connection from the instance's address came in and has not
    /// said hello yet (its dial, made before its advertisement was up): waited for, though
    /// our name sorts first, and decided again as soon as it settles.
    @Test func aConnectionFromTheInstancesAddressIsWaitedFor() {
        var pending = Self.facts()
        pending.inboundPending = { DialFacts.host($0) == "fe80::2" }
        let s = Self.service("z", address: "fe80::2%2", ipv6: true)  // sorts after ours: we would dial at once
        var book = DialBook(policy: DialPolicy())
        #expect(book.found(s, linkedAs: nil, pending, at: Self.t0) == [.retry(s.key, afterNanoseconds: 3_000_000_000)])
        #expect(book[s.key]?.holdingBack == true)
        // It became the link, whose hello names the instance: nothing to dial, then or later.
        book.linked(Self.peer, dialled: nil, advertises: { $0 == s.key })
        #expect(book.inboundSettled(from: "fe80::2", Self.facts(linked: [Self.peer]), at: Self.at(200)) == [])
        #expect(book.retryDue(s.key, Self.facts(linked: [Self.peer]), at: Self.at(3000)) == [])

        // It ended without a link: dialled at once, not when the 3 s are up.
        var other = DialBook(policy: DialPolicy())
        #expect(other.found(s, linkedAs: nil, pending, at: Self.t0).count == 1)
        #expect(other.inboundSettled(from: "fe80::2", Self.facts(), at: Self.at(200)) == [.dial(s.key, address: "fe80::2%2", port: 4242)])
        #expect(other.retryDue(s.key, Self.facts(), at: Self.at(3000)) == [], "its dial is under way")

        // One from another address changes nothing; IPv4 matches as the socket shows it.
        var third = DialBook(policy: DialPolicy())
        #expect(third.found(Self.service("y", address: "fe80::3%2", ipv6: true), linkedAs: nil, pending, at: Self.t0).count == 1)
        var mapped = Self.facts()
        mapped.inboundPending = { DialFacts.host($0) == DialFacts.host("::ffff:10.0.0.2") }
        #expect(third.found(Self.service("x"), linkedAs: nil, mapped, at: Self.t0) == [.retry(ServiceKey(interfaceIndex: 2, ipv6: false, name: "x", domain: "local"), afterNanoseconds: 3_000_000_000)])
    }

    @Test func aStrangerIsRememberedAndNotDialledAgain() {
        var book = DialBook(policy: DialPolicy())
        let s = Self.service("z")
        _ = book.found(s, linkedAs: nil, Self.facts(), at: Self.t0)
        let after = book.dialFinished(s.key, verdict: .untrusted(Self.stranger), failure: .tlsFailed, Self.facts(), at: Self.at(50))
        #expect(after == [.noteStranger(Self.stranger, address: "10.0.0.2")], "no timer for a device nobody trusts")
        #expect(book.consider(s.key, Self.facts(), at: Self.at(60_000)) == [])
    }

    @Test func anInstanceRemovedDuringItsDialGoesWhenTheDialEnds() {
        var book = DialBook(policy: DialPolicy())
        let v4 = Self.service("z"), v6 = Self.service("z", address: "fd00::2", ipv6: true)
        #expect(book.found(v4, linkedAs: nil, Self.facts(), at: Self.t0).count == 1)
        #expect(book.found(v6, linkedAs: nil, Self.facts(), at: Self.t0) == [], "its IPv4 address is being dialled")
        book.removed(v4.key)
        #expect(book[v4.key]?.gone == true)
        // The dial ends: the IPv4 record goes, and the IPv6 address is dialled.
        #expect(book.dialFinished(v4.key, verdict: nil, failure: .noAnswer, Self.facts(), at: Self.at(10)) == [.dial(v6.key, address: "fd00::2", port: 4242)])
        #expect(book[v4.key] == nil)
    }

    @Test func trustOrANewNetworkForgetsTheBackoff() {
        var book = DialBook(policy: DialPolicy())
        let s = Self.service("z")
        _ = book.found(s, linkedAs: nil, Self.facts(), at: Self.t0)
        _ = book.dialFinished(s.key, verdict: .trusted(Self.peer), failure: .refused, Self.facts(), at: Self.at(10))
        #expect(book[s.key]?.failures == 1 && book[s.key]?.notBefore == Self.at(510))
        #expect(book.consider(s.key, Self.facts(), at: Self.at(20)) == [], "backing off (its timer is set)")
        #expect(book.networkChanged(Self.facts(), at: Self.at(20)) == [.dial(s.key, address: "10.0.0.2", port: 4242)], "at once")
        #expect(book[s.key]?.failures == 0)
        _ = book.dialFinished(s.key, verdict: .trusted(Self.peer), failure: .refused, Self.facts(), at: Self.at(30))
        #expect(book.trusted(Self.peer, Self.facts(), at: Self.at(40)) == [.dial(s.key, address: "10.0.0.2", port: 4242)])
    }

    @Test func staticPeersAreAddedOnce() {
        var book = DialBook(policy: DialPolicy())
        let key = ServiceKey(interfaceIndex: -1, ipv6: false, name: "10.0.0.9:4242", domain: "static")
        let s = DiscoveredService(key: key, hostName: "10.0.0.9", address: "10.0.0.9", port: 4242, txt: [:])
        #expect(book.addStatic(s, Self.facts(), at: Self.t0) == [.dial(key, address: "10.0.0.9", port: 4242)], "dialled whoever answers there")
        #expect(book.addStatic(s, Self.facts(), at: Self.t0) == nil)
        #expect(book[key]?.isStatic == true)
    }

    @Test func onlyWhatCouldStillMatterIsWatched() {
        var book = DialBook(policy: DialPolicy())
        let s = Self.service("z")
        var facts = Self.facts(linked: [Self.peer], canWatch: true)
        _ = book.found(s, linkedAs: Self.peer, facts, at: Self.t0)
        #expect(book[s.key]?.watched == false, "its device is linked: its TXT says nothing new")
        facts = Self.facts(linked: [], canWatch: true)
        #expect(book.watchAll(facts).contains(.watch(s.key, true)), "unlinked: a new hint would say to dial at once")
    }

    static func lastLink(_ address: String = "10.0.0.2") -> DiscoveredService {
        DiscoveredService(key: ServiceKey(interfaceIndex: -1, ipv6: false, name: "\(address):4242", domain: "link"),
                          hostName: address, address: address, port: 4242, txt: [:])
    }

    /// Facts with our device ID: `peer` (7s) sorts before `small` (1s) and after `large` (0xF0s).
    static let small = DeviceID(bytes: Array(repeating: 1, count: 32))
    static let large = DeviceID(bytes: Array(repeating: 0xF0, count: 32))
    static func facts(own: DeviceID, linked: Set<DeviceID> = []) -> DialFacts {
        var f = facts(linked: linked)
        f.ownDeviceID = own
        return f
    }

    @Test func aPeerMDNSLostIsDialledWhereItsLinkReachedIt() {
        var book = DialBook(policy: DialPolicy())
        let was = Self.lastLink()
        // Its instance was renamed while linked, and the new name never resolved here: mDNS
        // knows nothing of it. Our ID is the larger: the peer's dial is the one both keep, so
        // ours waits the hold back first.
        let facts = Self.facts(own: Self.large)
        #expect(book.unlinked(Self.peer, wasAt: was, facts, at: Self.t0) == [.retry(was.key, afterNanoseconds: 0)])
        #expect(book.retryDue(was.key, facts, at: Self.t0) == [.retry(was.key, afterNanoseconds: 3_000_000_000)])
        #expect(book.retryDue(was.key, facts, at: Self.at(3000)) == [.dial(was.key, address: "10.0.0.2", port: 4242)])
        #expect(book[was.key]?.deviceID == Self.peer && book[was.key]?.watched == false, "no resolver for it")
        // Failed dials back off as for a configured peer (no announcement revives it) ...
        var now: Int64 = 3000
        var waits: [Int64] = []
        for _ in 0..<8 {
            let after = book.dialFinished(was.key, verdict: nil, failure: .noAnswer, facts, at: Self.at(now))
            guard case .retry(_, let wait)? = after.first else { Issue.record("no retry: \(after)"); return }
            waits.append(wait / 1_000_000)
            now += wait / 1_000_000
            #expect(book.retryDue(was.key, facts, at: Self.at(now)) == [.dial(was.key, address: "10.0.0.2", port: 4242)])
        }
        #expect(waits == [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000])
        // ... and stop after ten minutes: a peer away longer is found by mDNS when back.
        _ = book.dialFinished(was.key, verdict: nil, failure: .noAnswer, facts, at: Self.at(now))
        #expect(book.retryDue(was.key, facts, at: Self.at(600_000)) == [])
        #expect(book[was.key] == nil)
    }

    @Test func theSmallerDeviceDialsALastLinkAtOnce() {
        var book = DialBook(policy: DialPolicy())
        let was = Self.lastLink()
        let facts = Self.facts(own: Self.small)
        _ = book.unlinked(Self.peer, wasAt: was, facts, at: Self.t0)
        #expect(book.retryDue(was.key, facts, at: Self.t0) == [.dial(was.key, address: "10.0.0.2", port: 4242)])
        // The link it made: the address is forgotten when its dial ends.
        book.linked(Self.peer, dialled: was.key, advertises: { _ in false })
        _ = book.dialFinished(was.key, verdict: .trusted(Self.peer), failure: nil, Self.facts(own: Self.small, linked: [Self.peer]), at: Self.at(5))
        #expect(book[was.key] == nil)
    }

    @Test func aLastLinkWaitsWhileMDNSHasAnInstanceThatMayBeThePeer() {
        var book = DialBook(policy: DialPolicy())
        let was = Self.lastLink(), s = Self.service("a")  // sorts before ours: it dials, we hold back
        let facts = Self.facts(own: Self.small)
        _ = book.found(s, linkedAs: Self.peer, facts, at: Self.t0)
        _ = book.unlinked(Self.peer, wasAt: was, facts, at: Self.at(10))
        // The instance is the peer's: its dial (or ours after the hold back) is the one.
        #expect(book.retryDue(was.key, facts, at: Self.at(10)) == [.retry(was.key, afterNanoseconds: 4_000_000_000)])
        // mDNS withdraws it (the peer renamed it): the last address is dialled.
        book.removed(s.key)
        #expect(book.retryDue(was.key, facts, at: Self.at(4010)) == [.dial(was.key, address: "10.0.0.2", port: 4242)])

        // Our own instance (its tag checks out too) is not the peer.
        var own = DialBook(policy: DialPolicy())
        let ours = Self.service("m")
        _ = own.found(ours, linkedAs: nil, facts, at: Self.t0)
        _ = own.dialFinished(ours.key, verdict: .ourselves, failure: nil, facts, at: Self.at(1))
        _ = own.unlinked(Self.peer, wasAt: was, facts, at: Self.at(10))
        #expect(own.retryDue(was.key, facts, at: Self.at(10)) == [.dial(was.key, address: "10.0.0.2", port: 4242)])
        // ...also when it was never dialled to learn so (found while every trusted device
        // was linked): its name is the one we advertise. (CI, stop 50: both sides' own
        // instances kept a dead link from being dialled for good.)
        var undialled = DialBook(policy: DialPolicy())
        #expect(undialled.found(ours, linkedAs: nil, Self.facts(own: Self.small, linked: [Self.peer]), at: Self.t0) == [])
        _ = undialled.unlinked(Self.peer, wasAt: was, facts, at: Self.at(10))
        #expect(undialled.retryDue(was.key, facts, at: Self.at(10)) == [.dial(was.key, address: "10.0.0.2", port: 4242)])
        // An instance not identified yet whose tag checks out may be the peer under a new name.
        var other = DialBook(policy: DialPolicy())
        _ = other.found(Self.service("z"), linkedAs: nil, facts, at: Self.t0)
        _ = other.unlinked(Self.peer, wasAt: was, facts, at: Self.at(10))
        #expect(other.retryDue(was.key, facts, at: Self.at(10)) == [.retry(was.key, afterNanoseconds: 4_000_000_000)])
    }

    @Test func aLastLinkIsForgottenWhenLinkedAgainOrUntrusted() {
        var book = DialBook(policy: DialPolicy())
        let was = Self.lastLink(), newer = Self.lastLink("10.0.0.3")
        _ = book.unlinked(Self.peer, wasAt: was, Self.facts(own: Self.large), at: Self.t0)
        // A later link elsewhere: only its address is kept.
        _ = book.unlinked(Self.peer, wasAt: newer, Self.facts(own: Self.large), at: Self.at(10))
        #expect(book[was.key] == nil && book[newer.key]?.isLastLink == true)
        book.linked(Self.peer, dialled: nil, advertises: { _ in false })
        #expect(book[newer.key] == nil, "linked again: the next link will say where it is")
        var untrusting = Self.facts(own: Self.large)
        untrusting.isTrusted = { _ in false }
        #expect(book.unlinked(Self.peer, wasAt: was, untrusting, at: Self.at(20)) == [])
        #expect(book[was.key] == nil, "nobody dials a device no longer trusted")
    }
}
