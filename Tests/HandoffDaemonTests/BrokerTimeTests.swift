import HandoffCore
import HandoffControlAPI
import Logging
import Testing
@testable import HandoffDaemon

/// The brokers' deadlines with a manual clock: a session agent that never answers a
/// launch, an app that never takes a stream. Each request fails when the test moves the
/// time past its deadline, and not before.
@Suite("Broker deadlines")
struct BrokerTimeTests {
    /// The next event that is not the session's first.
    static func next(_ events: inout AsyncStream<ControlEvent>.Iterator) async -> ControlEvent? {
        while let e = await events.next() {
            if case .session = e { continue }
            return e
        }
        return nil
    }

    @Test func aLaunchTheAgentNeverAnswersFailsAtItsDeadline() async throws {
        let time = ManualTime()
        let registry = ActivityRegistryTimeTests.registry(time)
        let agent = SessionAgentBroker(registry: registry, timers: time, timeout: .seconds(60))
        let (token, stream) = await registry.openSession()
        var events = stream.makeAsyncIterator()
        try await agent.claim(session: token)
        let record = try await registry.becomeCurrent(ActivityDraft(activityType: "org.example.t"), session: nil)
        async let outcome = agent.launch(record, from: PeerDevice(id: "x", name: "desk"))
        var asked = false
        while let e = await Self.next(&events) {
            if case .launchRequested = e { asked = true; break }
        }
        #expect(asked, "the agent is asked")
        #expect(time.pending == 2, "the launch's deadline and the activity's expiry")
        time.advance(by: .seconds(59))
        #expect(time.pending == 2, "not yet")
        time.advance(by: .seconds(1))
        guard case .failed(let code, let message) = await outcome else { Issue.record("a launch without an answer fails"); return }
        #expect(code == "launch_timeout" && message.contains("60"))
    }

    @Test func aStreamTheOwnerNeverTakesFailsAtItsDeadline() async throws {
        let time = ManualTime()
        let registry = ActivityRegistryTimeTests.registry(time)
        let broker = StreamBroker(registry: registry, acceptTimeout: .seconds(10), timers: time)
        let (token, stream) = await registry.openSession()
        var events = stream.makeAsyncIterator()
        let id = ActivityID.random()
        async let result = broker.askOwner(activityID: id, session: token, device: PeerDevice(id: "x", name: "laptop"))
        var asked = false
        while let e = await Self.next(&events) {
            if case .streamRequested = e { asked = true; break }
        }
        #expect(asked && time.pending == 1)
        time.advance(by: .milliseconds(9_999))
        #expect(time.pending == 1, "not yet")
        time.advance(by: .milliseconds(1))
        guard case .failure(let failure) = await result else { Issue.record("no stream without the owner taking it"); return }
        #expect(failure.code == "stream_timeout" && failure.message.contains("10 s"))
    }
}
