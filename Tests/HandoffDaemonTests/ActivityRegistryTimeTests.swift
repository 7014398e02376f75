import HandoffCore
import HandoffControlAPI
import Logging
import Testing
@testable import HandoffDaemon

/// What the registry does when time passes, with a manual clock and timers: expiry and
/// will-save deadlines happen when the test moves the time, not after real waiting.
@Suite("Activity registry over time")
struct ActivityRegistryTimeTests {
    static func registry(_ time: ManualTime, unownedExpiry: Duration? = .seconds(3600), willSave: Duration = .milliseconds(500)) -> ActivityRegistry {
        ActivityRegistry(settings: .init(device: DeviceRef(name: "desk", id: nil), willSaveTimeout: willSave, unownedExpiry: unownedExpiry),
                         store: nil, logger: Logger(label: "test"), clock: time, timers: time)
    }

    /// The next event that is not a session's first.
    static func next(_ events: inout AsyncStream<ControlEvent>.Iterator) async -> ControlEvent? {
        while let e = await events.next() {
            if case .session = e { continue }
            return e
        }
        return nil
    }

    /// An app's activity with needsSave, made current; its session's events after that.
    static func ownedNeedingSave(_ registry: ActivityRegistry) async throws -> (ActivityRecord, AsyncStream<ControlEvent>.Iterator) {
        let (token, stream) = await registry.openSession()
        var events = stream.makeAsyncIterator()
        var draft = ActivityDraft(activityType: "org.example.t")
        draft.needsSave = true
        let r = try await registry.becomeCurrent(draft, session: token)
        _ = await next(&events)
        return (r, events)
    }

    @Test func anUnownedActivityExpiresWhenItsTimeComes() async throws {
        let time = ManualTime()
        let registry = Self.registry(time)
        let (_, stream) = await registry.openSession()
        var events = stream.makeAsyncIterator()
        let r = try await registry.becomeCurrent(ActivityDraft(activityType: "org.example.t"), session: nil)
        #expect(r.activity.expirationDate == time.now().adding(nanoseconds: 3600 * 1_000_000_000))
        guard case .becameCurrent? = await Self.next(&events) else { Issue.record("became-current first"); return }
        time.advance(by: .seconds(3599))
        #expect(await registry.current?.activity.id == r.activity.id, "not yet")
        time.advance(by: .seconds(1))
        guard case .expired(let gone)? = await Self.next(&events) else { Issue.record("expired next"); return }
        #expect(gone.activity.id == r.activity.id)
        #expect(await registry.current == nil && time.pending == 0, "nothing more is scheduled")
    }

    @Test func aSnapshotWaitsForTheOwnersSaveUntilTheDeadline() async throws {
        let time = ManualTime()
        let registry = Self.registry(time)
        let (r, first) = try await Self.ownedNeedingSave(registry)
        var events = first
        // The owner never answers: at the deadline the last payload is served, stale.
        async let late = registry.snapshot(r.activity.id.rawValue)
        guard case .willSave? = await Self.next(&events) else { Issue.record("will-save"); return }
        time.advance(by: .milliseconds(499))
        #expect(time.pending == 1, "still waiting")
        time.advance(by: .milliseconds(1))
        #expect(try await late.stale == true)
        // It answers in time: the fresh payload, not stale.
        async let fresh = registry.snapshot(r.activity.id.rawValue)
        guard case .willSave? = await Self.next(&events) else { Issue.record("will-save again"); return }
        var update = ActivityUpdate()
        update.title = "saved"
        _ = try await registry.update(r.activity.id.rawValue, update)
        let answer = try await fresh
        #expect(answer.stale == false && answer.activity.title == "saved" && !answer.activity.needsSave)
        #expect(time.pending == 0, "the deadline was cancelled")
    }

    @Test func invalidatingFailsAWaitingSnapshot() async throws {
        let time = ManualTime()
        let registry = Self.registry(time)
        let (r, first) = try await Self.ownedNeedingSave(registry)
        var events = first
        let waiting = Task { try await registry.snapshot(r.activity.id.rawValue) }
        guard case .willSave? = await Self.next(&events) else { Issue.record("will-save"); return }
        _ = try await registry.invalidate(r.activity.id.rawValue)
        await #expect(throws: HandoffError.invalidated(r.activity.id)) { try await waiting.value }
    }
}
