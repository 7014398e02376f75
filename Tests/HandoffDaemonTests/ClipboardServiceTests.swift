import HandoffControlAPI
import HandoffCore
import HandoffPeerProtocol
import HandoffTestSupport
import Logging
import NIOConcurrencyHelpers
import Testing
@testable import HandoffDaemon

/// The clipboard service as the link layer and the control API drive it, with the time
/// given: which links hear a copy, what sessions hear, when a copy ends, and what a link's
/// end or a session's end takes with it. (ClipboardTableTests has the decisions alone;
/// ClipboardTests the whole path between workstations.)
@Suite("Clipboard service")
struct ClipboardServiceTests {
    let time = ManualTime()
    let tap = EventTap()
    let open = NIOLockedValueBox<Set<String>>(["app"])
    let text = [ClipboardFormat(type: "text/plain;charset=utf-8", size: 5)]

    func service(_ configure: (inout ClipboardService.Settings) -> Void = { _ in }) -> ClipboardService {
        var settings = ClipboardService.Settings()
        settings.lifetimeSeconds = 600
        configure(&settings)
        let open = self.open
        return ClipboardService(settings: settings, own: PeerDevice(id: "HERE", name: "desk"), isSessionOpen: { token in open.withLockedValue { $0.contains(token) } },
                                events: tap.continuation, clock: time, timers: time, logger: Logger(label: "test"))
    }

    static func clipboardEvents(_ events: [ControlEvent]) -> [ClipboardRecord?] {
        events.compactMap { if case .clipboard(let r) = $0 { r } else { nil } }
    }

    static func offers(_ messages: [PeerMessage]) -> [ClipboardOffer?] {
        messages.compactMap { if case .clipboard(let o) = $0 { o } else { nil } }
    }

    @Test func aCopyIsAnnouncedToEveryLinkThatSpeaksVersion3AndEndsAtItsLifetime() async throws {
        let clipboard = service()
        let (v3, v2) = (RecordingLink(2, name: "laptop"), RecordingLink(3, name: "old", version: 2))
        await clipboard.linkUp(v3)
        await clipboard.linkUp(v2)
        let record = try await clipboard.copyHeld(Array("hello".utf8), type: "text/plain;charset=utf-8")
        #expect(record.local && record.expiresAt == time.now().adding(nanoseconds: 600 * 1_000_000_000))
        let heard = Self.offers(v3.take())
        #expect(heard.count == 1 && heard[0]?.id == record.id && heard[0]?.formats.first?.size == 5, "formats and sizes, never bytes")
        #expect(v2.take().isEmpty, "a version 2 link knows no clipboard message")
        #expect(Self.clipboardEvents(await tap.drain()).map { $0?.id } == [record.id])
        time.advance(by: .seconds(599))
        await Task.yield()
        #expect(await clipboard.record()?.id == record.id, "not yet")
        time.advance(by: .seconds(1))
        var ended: [ClipboardRecord?] = []
        try await eventually("sessions hear that the copy ended at its lifetime") {
            ended += Self.clipboardEvents(await tap.drain())
            return !ended.isEmpty
        }
        #expect(ended == [nil] && Self.offers(v3.take()) == [nil], "sessions and links hear that no copy stands")
        #expect(await clipboard.record() == nil && time.pending == 0, "no timer is left once no copy stands")
    }

    @Test func aLinkThatSubscribesHearsTheCopyAndOneThatWentDownHearsNoMore() async throws {
        let clipboard = service()
        let link = RecordingLink(2)
        await clipboard.linkUp(link)
        _ = try await clipboard.copyHeld([1], type: "application/octet-stream")
        _ = link.take()
        await clipboard.subscribed(link)
        #expect(Self.offers(link.take()).count == 1, "a subscriber hears the standing copy at once")
        await clipboard.linkDown(link)
        _ = try await clipboard.copyHeld([2], type: "application/octet-stream")
        #expect(link.take().isEmpty)
    }

    @Test func aPeersCopyGoesWithItsLinkButNotWithALinkItReplaced() async throws {
        let clipboard = service()
        let (first, second) = (RecordingLink(2, name: "laptop"), RecordingLink(2, name: "laptop"))
        await clipboard.linkUp(first)
        await clipboard.linkUp(second)  // the same device's newer link
        let offer = ClipboardOffer(id: .random(), formats: text, ageMilliseconds: 0, remainingMilliseconds: 600_000)
        await clipboard.heard(offer, from: second)
        let heard = Self.clipboardEvents(await tap.drain())
        #expect(heard.count == 1 && heard[0]?.id == offer.id && heard[0]?.local == false && heard[0]?.device.name == "laptop")
        guard case .success(.peer(let origin, let id, _)) = await clipboard.pasteTarget(id: nil, type: nil) else {
            Issue.record("a paste here reads a peer's copy from that peer"); return
        }
        #expect(origin == second.deviceID && id == offer.id)
        await clipboard.linkDown(first)
        #expect(await clipboard.record()?.id == offer.id, "the replaced link's end is not the device's")
        #expect(await tap.drain().isEmpty)
        await clipboard.linkDown(second)
        #expect(await clipboard.record() == nil)
        #expect(Self.clipboardEvents(await tap.drain()) == [nil])
    }

    @Test func anAppsCopyNeedsItsSessionOpenAndGoesWithIt() async throws {
        let clipboard = service()
        await #expect(throws: HandoffError.self) { try await clipboard.announce(text, session: "gone") }
        let record = try await clipboard.announce(text, session: "app")
        guard case .success(.session("app")) = await clipboard.source(record.id, type: text[0].type) else {
            Issue.record("a peer's paste is served by the app's session"); return
        }
        await clipboard.sessionEnded("other")
        #expect(await clipboard.record()?.id == record.id)
        await clipboard.sessionEnded("app")
        #expect(await clipboard.record() == nil)
        _ = await tap.drain()
    }

    @Test func turnedOffNothingIsCopiedHeardOrPasted() async throws {
        let clipboard = service { $0.enabled = false }
        let link = RecordingLink(2)
        await clipboard.linkUp(link)
        await #expect(throws: HandoffError.self) { try await clipboard.copyHeld([1], type: "text/plain") }
        await clipboard.heard(ClipboardOffer(id: .random(), formats: text, ageMilliseconds: 0, remainingMilliseconds: 1000), from: link)
        let (record, events) = (await clipboard.record(), await tap.drain())
        #expect(record == nil && link.take().isEmpty && events.isEmpty)
        guard case .failure(let f) = await clipboard.pasteTarget(id: nil, type: nil) else { Issue.record("no paste while off"); return }
        #expect(f.code == "clipboard_off")
    }

    @Test func stoppingCancelsTheTimerAndSchedulesNoOther() async throws {
        let clipboard = service()
        _ = try await clipboard.copyHeld([1], type: "text/plain")
        #expect(time.pending == 1)
        await clipboard.stop()
        #expect(time.pending == 0)
        _ = try await clipboard.copyHeld([2], type: "text/plain")
        #expect(time.pending == 0)
    }
}
