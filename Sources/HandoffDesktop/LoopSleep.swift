import NIOCore
import NIOPosix

/// Sleeping on an event-loop timer. `Task.sleep` hands its timer to libdispatch even with
/// Swift concurrency on NIO's event loops, and libdispatch then keeps a thread waking
/// every second for ever: an idle agent must not. Cancelling the task ends the sleep at
/// once (a race against a deadline must not wait the deadline out).
enum LoopSleep {
    static func sleep(nanoseconds: UInt64) async throws {
        try Task.checkCancellation()
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let timer = loop.scheduleTask(in: .nanoseconds(Int64(min(nanoseconds, UInt64(Int64.max))))) {}
        try await withTaskCancellationHandler {
            try await timer.futureResult.get()
        } onCancel: {
            timer.cancel()
        }
        try Task.checkCancellation()
    }
}
