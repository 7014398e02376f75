import Foundation

/// Runs a blocking call (waiting for a process, poll on a socket) on its own thread, so
/// it never holds one of the few threads Swift's concurrency pool has: on a 2-core
/// machine two such calls would otherwise starve every other test.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try work() })
        }
    }
}

func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: work()) }
    }
}

extension Process {
    /// `waitUntilExit` without blocking the concurrency pool.
    func exit() async {
        let p = self
        nonisolated(unsafe) let unsafeP = p
        await offPool { unsafeP.waitUntilExit() }
    }
}
