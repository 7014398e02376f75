import Crypto
import Foundation
import HandoffControlAPI
import HandoffCore
import HandoffPeerProtocol
import HandoffStreamFrames
import HandoffTestSupport
import Logging
import Testing
@testable import HandoffDaemon

/// The kept-offers service as the link layer drives it, with the time given and real
/// keys: what each link hears, what is kept and passed on, what stands in for an origin
/// whose link ended, what this workstation hands out and withdraws, and when what is kept
/// goes. (KeptOffersTests has the decisions alone; KeptOffersTests in the integration
/// suite the whole path across sleeping workstations.)
@Suite("Keeping service")
struct KeepingServiceTests {
    typealias Member = KeptOffersTests.Member
    let time = ManualTime(KeptOffersTests.t0)
    let tap = EventTap()
    let desk = Member(1), laptop = Member(2), tablet = Member(5), stranger = Member(4)
    let directory: String
    let identity: DeviceIdentity
    let registry: ActivityRegistry

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keeping-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        identity = try DeviceIdentity.loadOrCreate(directory: directory)
        registry = ActivityRegistryTimeTests.registry(time)
    }

    func service() -> KeepingService {
        KeepingService(identity: identity, registry: registry, restoration: nil, trust: TrustStore(stateDirectory: directory, logger: Logger(label: "test")),
                       limits: ActivityLimits(), maximumFrameBytes: 1 << 20, store: KeptOfferStore(stateDirectory: directory),
                       events: tap.continuation, clock: time, timers: time, logger: Logger(label: "test"))
    }

    /// The account as this workstation knows it: desk, laptop and tablet are members.
    var memberKey: @Sendable (DeviceID) -> P256.Signing.PublicKey? {
        let members = [desk, laptop, tablet]
        return { id in members.first { $0.id == id }?.key.publicKey }
    }

    static func kept(_ messages: [PeerMessage]) -> [KeptOffer] {
        messages.flatMap { m -> [KeptOffer] in
            guard case .kept(let blobs) = m else { return [] }
            return blobs.compactMap { try? KeptOffer(decoding: $0, maximumPayload: 1 << 20) }
        }
    }

    static func offerEvents(_ events: [ControlEvent]) -> [(String, ActivitySummary?)] {
        events.compactMap { if case .peerOffer(let d, let s) = $0 { (d.id, s) } else { nil } }
    }

    @Test func whatAMemberSendsIsKeptPassedOnAndShownForAnOriginNotLinked() async throws {
        let keeping = service()
        let (fromLaptop, toTablet) = (RecordingLink(2, name: "laptop"), RecordingLink(5, name: "tablet"))
        await keeping.linkUp(fromLaptop)
        await keeping.linkUp(toTablet)
        #expect(fromLaptop.take() == [.keptIndex([])] && toTablet.take() == [.keptIndex([])], "each link hears the (empty) index first")
        let offer = try desk.offer("draft", sequence: 3, expires: KeptOffersTests.at(600))
        try await keeping.take([offer.encoded], from: fromLaptop, memberKey: memberKey)
        #expect(Self.kept(toTablet.take()) == [offer], "passed on to the other member linked now")
        #expect(fromLaptop.take().isEmpty, "never back to the sender")
        let shown = Self.offerEvents(await tap.drain())
        #expect(shown.count == 1 && shown[0].0 == desk.id.description && shown[0].1?.title == "draft")
        #expect(await keeping.offers(except: []).map(\.item) == [offer])
        #expect(await keeping.offers(except: [desk.id]).isEmpty, "a linked origin's live offer counts instead")
    }

    @Test func aForgedItemRefusesTheWholeMessageAndKeepsNothing() async throws {
        let keeping = service()
        let link = RecordingLink(2, name: "laptop")
        await keeping.linkUp(link)
        let good = try desk.offer("draft", sequence: 3)
        // Signed by a stranger, saying it is desk's.
        var forged = try stranger.offer("forged", sequence: 4)
        forged = try KeptOffer.offer(try forged.activity(), stale: false, targets: [], sequence: 4, origin: desk.id, at: KeptOffersTests.t0, key: stranger.key)
        await #expect(throws: PeerProtocolError.self) { try await keeping.take([good.encoded, forged.encoded], from: link, memberKey: memberKey) }
        await #expect(throws: PeerProtocolError.self) { try await keeping.take([[1, 2, 3]], from: link, memberKey: memberKey) }
        #expect(await keeping.offers(except: []).isEmpty)
        #expect(await tap.drain().isEmpty)
    }

    @Test func oneIndexPerLinkIsAnsweredWithWhatItLacks() async throws {
        let keeping = service()
        let (laptopLink, tabletLink) = (RecordingLink(2), RecordingLink(5))
        await keeping.linkUp(laptopLink)
        let offer = try desk.offer("draft", sequence: 3)
        try await keeping.take([offer.encoded], from: laptopLink, memberKey: memberKey)
        await keeping.linkUp(tabletLink)
        _ = tabletLink.take()
        await keeping.compare([.init(origin: desk.id.bytes, sequence: 3)], from: tabletLink)
        #expect(tabletLink.take().isEmpty, "it holds desk's sequence 3 already")
        let again = RecordingLink(5)  // tablet's next link: a new index is answered
        await keeping.linkUp(again)
        _ = again.take()
        await keeping.compare([], from: again)
        #expect(Self.kept(again.take()) == [offer])
        await keeping.compare([], from: again)
        #expect(again.take().isEmpty, "a second index on one link is ignored")
    }

    @Test func aKeptOfferStandsInWhenItsOriginsLinkEnds() async throws {
        let keeping = service()
        let (deskLink, laptopLink) = (RecordingLink(1, name: "desk"), RecordingLink(2))
        await keeping.linkUp(deskLink)
        await keeping.linkUp(laptopLink)
        try await keeping.take([try desk.offer("draft", sequence: 3).encoded], from: laptopLink, memberKey: memberKey)
        #expect(Self.offerEvents(await tap.drain()).isEmpty, "desk is linked: its live offer is the one apps see")
        await keeping.linkDown(RecordingLink(1))  // not desk's current link
        #expect(await tap.drain().isEmpty)
        await keeping.linkDown(deskLink)
        let shown = Self.offerEvents(await tap.drain())
        #expect(shown.count == 1 && shown[0].0 == desk.id.description && shown[0].1?.title == "draft")
    }

    @Test func ourOfferIsSignedHandedOutAndWithdrawnWhenItChanges() async throws {
        let keeping = service()
        let link = RecordingLink(2)
        await keeping.linkUp(link)
        _ = link.take()
        #expect(await keeping.pushOwnOffer() == false, "nothing offered, nothing handed out")
        var draft = ActivityDraft(activityType: "org.example.edit")
        draft.title = "notes"
        let record = try await registry.becomeCurrent(draft, session: nil)
        try await eventually("the registry offers it") { await registry.lastOffer?.id == record.activity.id }
        #expect(await keeping.pushOwnOffer())
        let handed = Self.kept(link.take())
        #expect(handed.count == 1 && handed[0].kind == .offer && handed[0].activityID == record.activity.id)
        #expect(handed[0].verifies(with: identity.signingKey.publicKey) && handed[0].origin == identity.deviceID)
        #expect(await keeping.handedTo([link, RecordingLink(9, version: 1)]) == 1, "a version 1 link keeps nothing")
        await keeping.ourOfferChanged(to: ActivitySummary(record.activity, payloadSize: 1))
        #expect(link.take().isEmpty, "still the same offer")
        await keeping.ourOfferChanged(to: nil)
        let withdrawn = Self.kept(link.take())
        #expect(withdrawn.count == 1 && withdrawn[0].kind == .withdrawn && withdrawn[0].sequence > handed[0].sequence)
    }

    @Test func whatIsKeptGoesAtItsTimeAndIsReadBackAtStart() async throws {
        let keeping = service()
        let link = RecordingLink(2)
        await keeping.linkUp(link)
        let offer = try desk.offer("draft", sequence: 3, expires: KeptOffersTests.at(600))
        try await keeping.take([offer.encoded], from: link, memberKey: memberKey)
        _ = await tap.drain()
        // A new start over the same state folder reads it back (once written: saves are
        // queued), checked against the account.
        await StateWriter.shared.settleAll()
        let restarted = service()
        await restarted.load(memberKey: memberKey)
        #expect(await restarted.offers(except: []).map(\.item) == [offer])
        let noLongerMember = service()
        await noLongerMember.load { _ in nil }
        #expect(await noLongerMember.offers(except: []).isEmpty, "an origin no longer in the account is dropped")
        await restarted.stop()
        await noLongerMember.stop()
        time.advance(by: .seconds(599))
        #expect(await keeping.offers(except: []).count == 1)
        time.advance(by: .seconds(2))
        var gone: [(String, ActivitySummary?)] = []
        try await eventually("the expiry is told") {
            gone += Self.offerEvents(await tap.drain())
            return !gone.isEmpty
        }
        #expect(gone.count == 1 && gone[0].0 == desk.id.description && gone[0].1 == nil)
        #expect(await keeping.offers(except: []).isEmpty)
    }

    @Test func forgettingAndLeavingTheAccountDropWhatWasKept() async throws {
        let keeping = service()
        let link = RecordingLink(2)
        await keeping.linkUp(link)
        try await keeping.take([try desk.offer("a", sequence: 1).encoded, try tablet.offer("b", sequence: 1).encoded], from: link, memberKey: memberKey)
        _ = await tap.drain()
        #expect(await keeping.forget([tablet.id]) == 1)
        #expect(Self.offerEvents(await tap.drain()).map(\.0) == [tablet.id.description])
        await keeping.left(desk.id)
        #expect(Self.offerEvents(await tap.drain()).map(\.0) == [desk.id.description])
        #expect(await keeping.offers(except: []).isEmpty)
        #expect(await keeping.forget(nil) == 0)
    }
}
