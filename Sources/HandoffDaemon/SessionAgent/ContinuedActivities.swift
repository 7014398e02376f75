import HandoffCore
import HandoffControlAPI

/// Activities continued on this workstation lately, so that the app launched to continue
/// one can fetch its payload (`GET /v1/continued/{id}`) after `handoffctl continue` has
/// returned. Bounded in count and in time: a continued activity is a moment's hand-over,
/// not storage.
struct ContinuedActivities {
    struct Entry: Sendable {
        let record: ActivityRecord
        let device: PeerDevice
        let at: Timestamp
        /// For a terminal: how it continues here, decided when it was continued.
        var terminal: Result<TerminalContinuation, ValidationError>?
    }

    static let retentionSeconds: Int64 = 600
    static let capacity = 32

    private var entries: [Entry] = []

    mutating func add(_ record: ActivityRecord, from device: PeerDevice, at now: Timestamp,
                      terminal: Result<TerminalContinuation, ValidationError>? = nil) {
        entries.removeAll { $0.record.activity.id == record.activity.id }
        entries.append(Entry(record: record, device: device, at: now, terminal: terminal))
        if entries.count > Self.capacity { entries.removeFirst(entries.count - Self.capacity) }
    }

    func entry(_ id: ActivityID, at now: Timestamp) -> Entry? {
        entries.last { $0.record.activity.id == id && isFresh($0, now) }
    }

    /// Newest first.
    func all(at now: Timestamp) -> [Entry] {
        entries.filter { isFresh($0, now) }.reversed()
    }

    private func isFresh(_ e: Entry, _ now: Timestamp) -> Bool {
        e.at.nanoseconds(until: now) < Self.retentionSeconds * 1_000_000_000
    }
}
