import NIOCore
import NIOPosix

/// Sleeping on an event-loop timer. `Task.sleep` hands its timer to libdispatch even with
/// Swift concurrency on NIO's event loops, and libdispatch then keeps a thread waking
/// every second for ever: an idle agent must not.
enum LoopSleep {
    static func sleep(nanoseconds: UInt64) async throws {
        try Task.checkCancellation()
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        try await loop.scheduleTask(in: .nanoseconds(Int64(min(nanoseconds, UInt64(Int64.max))))) {}.futureResult.get()
        try Task.checkCancellation()
    }
}
