import HandoffCore

/// What this workstation offers: the current activity's summary, and to whom (`--to`;
/// empty: every member). Only the summary travels; the targets decide where.
public struct OfferedActivity: Sendable, Equatable {
    public var summary: ActivitySummary
    public var targets: [DeviceID]

    public init(summary: ActivitySummary, targets: [DeviceID] = []) {
        self.summary = summary
        self.targets = targets
    }

    public var id: ActivityID { summary.id }

    /// Whether `device` may list, fetch and keep it.
    public func isFor(_ device: DeviceID) -> Bool { targets.isEmpty || targets.contains(device) }
}
