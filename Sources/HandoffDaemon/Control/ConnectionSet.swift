import NIOConcurrencyHelpers
import NIOCore

/// The open control connections: counted against the cap, and closed together at shutdown.
final class ConnectionSet: Sendable {
    private struct Entry {
        let channel: Channel
        var streaming = false
    }

    private let entries = NIOLockedValueBox<[ObjectIdentifier: Entry]>([:])

    /// False when the set is already full.
    func insert(_ channel: Channel, limit: Int) -> Bool {
        entries.withLockedValue { set in
            guard set.count < limit else { return false }
            set[ObjectIdentifier(channel)] = Entry(channel: channel)
            return true
        }
    }

    func remove(_ channel: Channel) {
        _ = entries.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// An event stream ends itself at shutdown (its last chunk written), so `closeIdle`
    /// leaves it alone.
    func markStreaming(_ channel: Channel) {
        entries.withLockedValue { $0[ObjectIdentifier(channel)]?.streaming = true }
    }

    /// Closes every connection that is not an event stream.
    func closeIdle() {
        let idle = entries.withLockedValue { $0.values.filter { !$0.streaming }.map(\.channel) }
        for c in idle { c.close(promise: nil) }
    }
}
