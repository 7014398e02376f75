import HandoffCore
import HandoffControlAPI

/// The open event streams (sessions). Each gets a bounded buffer: a client that stops
/// reading is cut off rather than allowed to grow the daemon's memory.
/// Not thread-safe: owned by `ActivityRegistry`'s actor.
struct EventHub {
    static let bufferLimit = 1024

    private var streams: [String: AsyncStream<ControlEvent>.Continuation] = [:]

    var sessionCount: Int { streams.count }

    func isOpen(_ token: String) -> Bool { streams[token] != nil }

    mutating func open() -> (token: String, events: AsyncStream<ControlEvent>) {
        let token = ActivityID.random().rawValue
        let (stream, continuation) = AsyncStream.makeStream(of: ControlEvent.self, bufferingPolicy: .bufferingOldest(Self.bufferLimit))
        continuation.yield(.session(token: token))
        streams[token] = continuation
        return (token, stream)
    }

    /// Returns whether the session was open.
    mutating func close(_ token: String) -> Bool {
        guard let c = streams.removeValue(forKey: token) else { return false }
        c.finish()
        return true
    }

    mutating func broadcast(_ event: ControlEvent) {
        for token in Array(streams.keys) { send(event, to: token) }
    }

    mutating func send(_ event: ControlEvent, to token: String) {
        guard let c = streams[token] else { return }
        if case .dropped = c.yield(event) {
            // The reader fell more than `bufferLimit` events behind: end its stream. The
            // connection then closes, and the session's activities follow the usual path.
            c.finish()
        }
    }

    mutating func closeAll() {
        for c in streams.values { c.finish() }
        streams.removeAll()
    }
}
