import HandoffClient
import HandoffControlAPI
import HandoffTestSupport

/// Collects a session's events in the background so a test can wait for one.
actor EventRecorder {
    private(set) var events: [ControlEvent] = []
    private var task: Task<Void, Never>?
    private(set) var ended = false
    /// The stream broke rather than ending cleanly.
    private(set) var failed = false

    init(_ session: EventSession) {
        Task { await self.start(session) }
    }

    private func start(_ session: EventSession) {
        task = Task {
            do {
                for try await e in session.events { self.append(e) }
            } catch {
                self.fail()
            }
            self.finish()
        }
    }

    private func append(_ e: ControlEvent) { events.append(e) }
    private func finish() { ended = true }
    private func fail() { failed = true }

    func names() -> [String] { events.map(\.name) }

    /// Waits until an event matching `match` has arrived, and returns it.
    func waitFor(_ what: String, timeout: Double = 10, _ match: @Sendable @escaping (ControlEvent) -> Bool) async throws -> ControlEvent {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline {
            if let found = events.first(where: match) { return found }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("timed out after \(timeout)s waiting for event \(what); saw \(events.map(\.name))")
    }
}
