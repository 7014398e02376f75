import HandoffControlAPI
import HandoffCore

/// What the panel shows (Docs/Desktop.md, "Presence"): what the user's other
/// workstations offer, the newest copy, pairing, the sources turned off and what doctor
/// warns about. A value the session agent keeps current from handoffd's events and
/// answers; the tray, the menu, search and the `org.handoff.Presence1` interface are all
/// made from it, so they cannot disagree. Holds nothing the local API does not give.
public struct Presence: Sendable, Equatable {
    /// The app that would open an offer here, as the resolver found it.
    public struct App: Sendable, Equatable {
        public var id: String
        public var name: String
        public var icon: String?

        public init(id: String, name: String, icon: String?) {
            self.id = id
            self.name = name
            self.icon = icon
        }
    }

    public struct Offer: Sendable, Equatable {
        public var device: PeerDevice
        public var activity: ActivitySummary
        /// When it was offered, on this workstation's clock (now minus the listing's age).
        public var offeredAt: Timestamp
        /// Kept here while its origin sleeps (it continues without the origin).
        public var kept: Bool
        public var stale: Bool
        public var app: App?

        public init(device: PeerDevice, activity: ActivitySummary, offeredAt: Timestamp, kept: Bool = false, stale: Bool = false, app: App? = nil) {
            self.device = device
            self.activity = activity
            self.offeredAt = offeredAt
            self.kept = kept
            self.stale = stale
            self.app = app
        }

        /// The title people see: the activity's, else its type.
        public var title: String { activity.title.isEmpty ? activity.activityType : activity.title }
    }

    /// A warning or failure of `handoffctl doctor`, or one of the agent's own.
    public struct Problem: Sendable, Equatable {
        public var id: String
        public var detail: String
        public var fix: String?

        public init(id: String, detail: String, fix: String?) {
            self.id = id
            self.detail = detail
            self.fix = fix
        }
    }

    /// Newest first.
    public var offers: [Offer] = []
    /// The account's newest copy (local or not).
    public var clipboard: ClipboardRecord?
    /// Pairing in progress; nil when no window is open.
    public var pairing: PairingStatus?
    /// Desktop sources turned off, by name.
    public var sourcesOff: [String] = []
    /// The sources the agent knows, on or off, in their order.
    public var sources: [String] = []
    public var problems: [Problem] = []
    /// This workstation was removed from the account: only a new identity pairs it again.
    public var removed = false
    /// KDE Connect devices (phones) worth an entry: paired and reachable (to continue on),
    /// or asking to pair (to accept or refuse). Empty while KDE Connect is off.
    public var phones: [KDEConnectDevice] = []

    public init() {}

    /// Something to continue.
    public var available: Bool { !offers.isEmpty }

    /// The offers of a listing (`GET /v1/offers`), newest first, as of `now`.
    public static func offers(_ listed: [HandoffControlAPI.Offer], at now: Timestamp, app: (ActivitySummary) -> App?) -> [Offer] {
        listed.map { o in
            let age = o.ageSeconds.isFinite ? max(0, min(o.ageSeconds, 1e9)) : 0
            return Offer(device: o.device, activity: o.activity, offeredAt: now.adding(nanoseconds: -Int64(age * 1e9)),
                         kept: o.kept, stale: o.stale, app: app(o.activity))
        }.sorted { $0.offeredAt != $1.offeredAt ? $0.offeredAt > $1.offeredAt : $0.activity.id.rawValue < $1.activity.id.rawValue }
    }

    /// The newest copy worth a "paste here": one made on another workstation, not expired.
    public func foreignCopy(at now: Timestamp) -> ClipboardRecord? {
        guard let c = clipboard, !c.local, c.expiresAt > now else { return nil }
        return c
    }

    /// Pairing as the menu shows it: nil once no window is open, whether it closed
    /// after pairing, by a cancel or a failure (`failed` without `expiresAt`), or expired.
    public static func pairing(_ status: PairingStatus?) -> PairingStatus? {
        guard let status else { return nil }
        switch status.state {
        case .closed, .paired: return nil
        case .failed: return status.expiresAt == nil ? nil : status
        case .waiting, .exchanging, .code: return status
        }
    }

    /// What doctor's checks say is wrong (warnings and failures), in their order.
    public static func problems(_ checks: [DiagnosticCheck]) -> [Problem] {
        checks.filter { $0.status != .ok }.map { Problem(id: $0.id, detail: $0.title + ": " + $0.detail, fix: $0.fix) }
    }
}
