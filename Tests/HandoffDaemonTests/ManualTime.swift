import HandoffCore
import NIOConcurrencyHelpers
@testable import HandoffDaemon

/// A clock and timers that move only when a test says so: what is due runs, in order of
/// its time, inside `advance`. Deadlines are tested without waiting for them.
final class ManualTime: WallClock, Timers, @unchecked Sendable {
    private struct Due {
        let at: Timestamp
        let id: Int
        let body: @Sendable () -> Void
    }

    private let lock = NIOLock()
    private var current: Timestamp
    private var due: [Due] = []
    private var nextID = 0

    init(_ start: Timestamp = Timestamp(seconds: 1_800_000_000, nanoseconds: 0)) { current = start }

    func now() -> Timestamp { lock.withLock { current } }

    /// How many timers wait.
    var pending: Int { lock.withLock { due.count } }

    func schedule(in delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let (seconds, attoseconds) = delay.components
        let id = lock.withLock {
            nextID += 1
            due.append(Due(at: current.adding(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000), id: nextID, body: body))
            return nextID
        }
        return ScheduledTimer { [weak self] in self?.lock.withLock { self?.due.removeAll { $0.id == id } } }
    }

    /// Moves the time on by `delay`, running each timer that falls due at its own time.
    func advance(by delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let end = now().adding(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        while true {
            let next: Due? = lock.withLock {
                guard let first = due.filter({ $0.at <= end }).min(by: { ($0.at, $0.id) < ($1.at, $1.id) }) else { return nil }
                due.removeAll { $0.id == first.id }
                current = first.at
                return first
            }
            guard let next else { break }
            next.body()
        }
        lock.withLock { current = end }
    }
}
