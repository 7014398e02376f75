import NIOCore

/// Where handoffd schedules what is due later: an event loop in the daemon, a manual one
/// in tests (with a manual `WallClock`, so a deadline passes when a test says so). Never
/// `Task.sleep`: sleeping tasks start libdispatch's once-a-second monitor thread, and the
/// idle daemon must not wake up.
protocol Timers: Sendable {
    func schedule(in delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer
    /// The same timers on `loop` (a connection's): what one connection schedules and
    /// cancels then stays on its own thread. Manual timers stay as they are.
    func bound(to loop: EventLoop) -> any Timers
}

extension Timers {
    func bound(to loop: EventLoop) -> any Timers { self }
}

/// A scheduled body that has not run yet can be cancelled; cancelling later does nothing.
struct ScheduledTimer: Sendable {
    let cancel: @Sendable () -> Void
}

struct EventLoopTimers: Timers {
    let loop: EventLoop

    func bound(to loop: EventLoop) -> any Timers { EventLoopTimers(loop: loop) }

    func schedule(in delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let (seconds, attoseconds) = delay.components
        let task = loop.scheduleTask(in: .nanoseconds(max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)), body)
        return ScheduledTimer { task.cancel() }
    }
}
