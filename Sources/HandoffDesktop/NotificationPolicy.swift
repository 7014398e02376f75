import HandoffCore

/// When an offer from another workstation deserves an "activity available" notification.
/// One notification per workstation, replaced rather than stacked; none for an activity
/// already shown (its updates are quiet), an expired one, or an offer withdrawn (whose
/// notification is closed); at most one per workstation per `interval` (the latest waits
/// its turn) and `perMinute` in all. A pure state machine: time comes in with each event.
public struct NotificationPolicy: Sendable {
    public var enabled: Bool
    public var interval: Int64
    public var perMinute: Int

    public enum Action: Sendable, Equatable {
        /// Show `summary` from `device`, replacing notification `replacing` if set.
        case show(device: PeerDevice, summary: ActivitySummary, replacing: UInt32?)
        case close(UInt32)
        /// Call `wake` at this time (a held-back offer is due).
        case wake(at: Timestamp)
    }

    private struct DeviceState {
        var device: PeerDevice
        var shownActivity: ActivityID?
        var notification: UInt32?
        var lastShown: Timestamp?
        var pending: ActivitySummary?
    }

    private var devices: [String: DeviceState] = [:]
    private var recent: [Timestamp] = []

    public init(enabled: Bool = true, intervalSeconds: Int64 = 10, perMinute: Int = 6) {
        self.enabled = enabled
        interval = intervalSeconds * 1_000_000_000
        self.perMinute = perMinute
    }

    public mutating func offer(from device: PeerDevice, _ summary: ActivitySummary?, at now: Timestamp) -> [Action] {
        var s = devices[device.id] ?? DeviceState(device: device)
        s.device = device
        defer { devices[device.id] = s }
        guard let summary, !(summary.expirationDate.map { $0 <= now } ?? false) else {
            s.pending = nil
            s.shownActivity = nil
            if let n = s.notification {
                s.notification = nil
                return [.close(n)]
            }
            return []
        }
        guard enabled, summary.id != s.shownActivity else {
            // Back to what is shown: anything held back is no longer what is offered.
            s.pending = nil
            return []
        }
        s.pending = summary
        return due(&s, now)
    }

    /// The workstation went away: its notification goes too.
    public mutating func disconnected(_ device: PeerDevice) -> [Action] {
        guard var s = devices.removeValue(forKey: device.id), let n = s.notification else { return [] }
        s.notification = nil
        return [.close(n)]
    }

    public mutating func wake(at now: Timestamp) -> [Action] {
        var actions: [Action] = []
        for key in devices.keys.sorted() {
            var s = devices[key]!
            if s.pending != nil { actions += due(&s, now) }
            devices[key] = s
        }
        // One wake-up is enough: keep the earliest.
        let wakes = actions.compactMap { if case .wake(let t) = $0 { t } else { nil } }
        return actions.filter { if case .wake = $0 { false } else { true } } + (wakes.min().map { [.wake(at: $0)] } ?? [])
    }

    /// The server gave the notification for `device` this id.
    public mutating func shown(_ device: PeerDevice, notification id: UInt32) {
        devices[device.id]?.notification = id
    }

    /// The user (or the server) closed it.
    public mutating func closed(notification id: UInt32) {
        for (k, s) in devices where s.notification == id { devices[k]?.notification = nil }
    }

    /// What a clicked notification stands for.
    public func target(of notification: UInt32) -> (device: PeerDevice, activity: ActivityID)? {
        for s in devices.values where s.notification == notification {
            if let a = s.shownActivity { return (s.device, a) }
        }
        return nil
    }

    private mutating func due(_ s: inout DeviceState, _ now: Timestamp) -> [Action] {
        guard let summary = s.pending else { return [] }
        recent.removeAll { $0.nanoseconds(until: now) >= 60_000_000_000 }
        var notBefore: Timestamp?
        if let last = s.lastShown, last.nanoseconds(until: now) < interval { notBefore = last.adding(nanoseconds: interval) }
        if recent.count >= perMinute, let oldest = recent.min() {
            let t = oldest.adding(nanoseconds: 60_000_000_000)
            notBefore = max(notBefore ?? t, t)
        }
        if let notBefore { return [.wake(at: notBefore)] }
        s.pending = nil
        s.shownActivity = summary.id
        s.lastShown = now
        recent.append(now)
        return [.show(device: s.device, summary: summary, replacing: s.notification)]
    }
}
