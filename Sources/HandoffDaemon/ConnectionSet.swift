import NIOConcurrencyHelpers
import NIOCore

/// The open control connections: counted against the cap, and closed together at shutdown.
final class ConnectionSet: Sendable {
    private let channels = NIOLockedValueBox<[ObjectIdentifier: Channel]>([:])

    /// False when the set is already full.
    func insert(_ channel: Channel, limit: Int) -> Bool {
        channels.withLockedValue { set in
            guard set.count < limit else { return false }
            set[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    func remove(_ channel: Channel) {
        _ = channels.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    func closeAll() {
        let all = channels.withLockedValue { Array($0.values) }
        for c in all { c.close(promise: nil) }
    }
}
