import ServiceLifecycle

/// A part of handoffd with a lifetime of its own in the daemon's `ServiceGroup`. The group
/// stops its services one at a time in the reverse of their order, each once the ones
/// after it have stopped: what a part relies on is still there while it stops.
struct LifetimeService: Service, CustomStringConvertible {
    let description: String
    private let start: @Sendable () async throws -> Void
    private let stop: @Sendable () async -> Void

    init(_ name: String, start: @escaping @Sendable () async throws -> Void = {}, stop: @escaping @Sendable () async -> Void) {
        description = name
        self.start = start
        self.stop = stop
    }

    func run() async throws {
        try await start()
        // Returns when graceful shutdown reaches this service; throws if the group is
        // cancelled instead, which must stop the part all the same.
        try? await gracefulShutdown()
        await stop()
    }
}
