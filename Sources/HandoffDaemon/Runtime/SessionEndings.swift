import ServiceLifecycle

/// What an event session held, let go when it closes: each part that keeps something per
/// session is told, in the order given, by this one task, one session after another (not
/// a task per part, which could tell a part of a later close first). The registry's
/// handler only queues the token (`ended`), so it holds none of the parts: the peer
/// service holds the registry, and a handler holding the peer service made a cycle that
/// LeakSanitizer found alive at exit.
struct SessionEndings: Service, CustomStringConvertible {
    typealias Listener = @Sendable (String) async -> Void

    var description: String { "session endings" }
    private let listeners: [(name: String, listener: Listener)]
    private let tokens: AsyncStream<String>
    private let queue: AsyncStream<String>.Continuation

    /// `listeners`: in the order they are told.
    init(_ listeners: [(name: String, listener: Listener)]) {
        self.listeners = listeners
        (tokens, queue) = AsyncStream.makeStream(of: String.self)
    }

    /// A session closed (the registry's `onSessionClosed`).
    var ended: @Sendable (String) -> Void {
        { [queue] token in queue.yield(token) }
    }

    func run() async throws {
        // Until graceful shutdown reaches this service: what was queued by then is told.
        await withGracefulShutdownHandler {
            for await token in tokens {
                for (_, listener) in listeners { await listener(token) }
            }
        } onGracefulShutdown: { [queue] in
            queue.finish()
        }
    }
}
