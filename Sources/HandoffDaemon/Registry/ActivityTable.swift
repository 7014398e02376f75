import HandoffCore
import HandoffControlAPI

/// The activities of this device as values: which one is current, who owns each, which are
/// final, when the next one expires, and the owners' caps. Every change returns the events
/// it makes and the activities it ended; the time comes with each call. No I/O, no clock,
/// no timers: `ActivityRegistry` performs what this decides, and the tests drive it
/// without sockets or waiting.
struct ActivityTable {
    struct Entry: Equatable {
        var activity: Activity
        var state: ActivityState
        var owner: ActivityOwner
        /// Daemon-owned activities only: the file served as their continuation streams.
        var streamFile: String?
        /// The local file of the activity's document (`handoff.document` in userInfo),
        /// served to peers that ask for it.
        var documentFile: String?
        /// Offered to these workstations only (`--to`); empty: to all.
        var targets: [DeviceID] = []
    }

    /// What a change did, for the registry to pass on.
    struct Outcome: Equatable {
        /// Events for every session, in order.
        var events: [ControlEvent] = []
        /// Activities that became final (invalidated or expired): their pending saves fail.
        var ended: [(id: ActivityID, state: ActivityState)] = []
        /// `update` only: the activity as updated, before an expiry the update brought
        /// (its `updated` event is the first of `events`).
        var updated: ActivityRecord?

        static func == (a: Outcome, b: Outcome) -> Bool {
            a.events == b.events && a.ended.map(\.id) == b.ended.map(\.id) && a.ended.map(\.state) == b.ended.map(\.state) && a.updated == b.updated
        }
    }

    /// Live (non-final) activities a session, or the daemon, may hold before the oldest
    /// non-current one is dropped.
    let maximumActivitiesPerOwner: Int
    /// How many invalidated or expired ids are remembered, so late calls get a clear 410.
    let rememberedFinalActivities: Int

    private(set) var entries: [ActivityID: Entry] = [:]
    private(set) var currentID: ActivityID?
    private var finalOrder: [ActivityID] = []

    init(maximumActivitiesPerOwner: Int = 32, rememberedFinalActivities: Int = 1024) {
        self.maximumActivitiesPerOwner = maximumActivitiesPerOwner
        self.rememberedFinalActivities = rememberedFinalActivities
    }

    static func isFinal(_ s: ActivityState) -> Bool { s == .invalidated || s == .expired }

    // MARK: - Queries

    var current: Entry? { currentID.flatMap { entries[$0] } }

    /// Live (current and resigned) activities, most recently updated first.
    var live: [Entry] {
        entries.values.filter { !Self.isFinal($0.state) }.sorted { $0.activity.updatedAt > $1.activity.updatedAt }
    }

    /// The entry `ref` names: an id, or `current`. Final ones only with `allowFinal`.
    func entry(_ ref: String, allowFinal: Bool) throws(HandoffError) -> Entry {
        let id: ActivityID
        if ref == "current" {
            guard let c = currentID else { throw HandoffError.noCurrent() }
            id = c
        } else {
            guard let parsed = ActivityID(ref) else {
                throw HandoffError.badRequest("\"\(ref)\" is not an activity id (32 hex digits) or \"current\"")
            }
            id = parsed
        }
        guard let e = entries[id] else { throw HandoffError.unknownActivity(ref) }
        if !allowFinal {
            if e.state == .invalidated { throw HandoffError.invalidated(id) }
            if e.state == .expired { throw HandoffError.expired(id) }
        }
        return e
    }

    /// When the next live activity expires, if any does.
    var nextExpiry: Timestamp? {
        entries.values.filter { !Self.isFinal($0.state) }.compactMap(\.activity.expirationDate).min()
    }

    /// What peers are offered: the current activity, if eligible for handoff and not expired.
    func offer(at now: Timestamp) -> OfferedActivity? {
        guard let e = current, e.state == .current, e.activity.eligibleForHandoff, !e.activity.isExpired(at: now) else { return nil }
        return OfferedActivity(summary: ActivitySummary(e.activity, payloadSize: ActivityPropertyList.encodedSize(of: e.activity)), targets: e.targets)
    }

    static func record(_ e: Entry) -> ActivityRecord {
        ActivityRecord(activity: e.activity, state: e.state, owner: e.owner.label,
                       payloadSize: ActivityPropertyList.encodedSize(of: e.activity), streamFile: e.streamFile, documentFile: e.documentFile,
                       to: e.targets.isEmpty ? nil : e.targets.map(\.description))
    }

    /// The daemon-owned live activities, as saved across restarts.
    var saved: SavedActivities { Self.saved(entries) }

    /// What `saved` would be after `change`, without changing anything: a change that must
    /// survive a restart is written before it is made.
    func saved(after change: (inout ActivityTable) -> Void) -> SavedActivities {
        var prospective = self
        change(&prospective)
        return prospective.saved
    }

    private static func saved(_ entries: [ActivityID: Entry]) -> SavedActivities {
        SavedActivities(activities: entries.values.filter { $0.owner == .daemon && !isFinal($0.state) }
            .sorted { $0.activity.createdAt < $1.activity.createdAt }
            .map { SavedActivity(activity: $0.activity, current: $0.state == .current, streamFile: $0.streamFile, documentFile: $0.documentFile,
                                  targets: $0.targets) })
    }

    // MARK: - Changes

    /// Brings back what was saved before a restart, less what has expired since.
    mutating func restore(_ saved: SavedActivities, at now: Timestamp) {
        for s in saved.activities where !s.activity.isExpired(at: now) {
            entries[s.activity.id] = Entry(activity: s.activity, state: s.current ? .current : .resigned, owner: .daemon,
                                           streamFile: s.streamFile, documentFile: s.documentFile, targets: s.targets)
            if s.current { currentID = s.activity.id }
        }
    }

    /// The live daemon-owned terminals a new one from the same shell (`userInfo.shell`)
    /// replaces: a shell offers one terminal at a time.
    func terminals(replacedBy a: Activity) -> [ActivityID] {
        guard a.activityType == WellKnownActivityType.terminal, let shell = a.userInfo["shell"] else { return [] }
        return entries.values.filter {
            $0.owner == .daemon && !Self.isFinal($0.state) && $0.activity.id != a.id
                && $0.activity.activityType == WellKnownActivityType.terminal && $0.activity.userInfo["shell"] == shell
        }.map(\.activity.id)
    }

    /// A new activity: it becomes current, and its owner's oldest beyond the cap go.
    mutating func add(_ entry: Entry) -> Outcome {
        var out = Outcome()
        entries[entry.activity.id] = entry
        evictBeyondCap(owner: entry.owner, keeping: entry.activity.id, &out)
        makeCurrent(entry.activity.id, &out)
        return out
    }

    /// A resigned activity becomes current again (nothing happens to the current one).
    mutating func becomeCurrent(_ id: ActivityID) -> Outcome {
        var out = Outcome()
        if entries[id]?.state != .current { makeCurrent(id, &out) }
        return out
    }

    mutating func resign(_ id: ActivityID) -> Outcome {
        var out = Outcome()
        if entries[id]?.state == .current {
            entries[id]!.state = .resigned
            currentID = nil
            out.events.append(.resigned(Self.record(entries[id]!)))
        }
        return out
    }

    /// A new payload; it expires at once when its new date is past.
    mutating func update(_ id: ActivityID, to activity: Activity, at now: Timestamp) -> Outcome {
        var out = Outcome()
        entries[id]!.activity = activity
        let record = Self.record(entries[id]!)
        out.updated = record
        out.events.append(.updated(record))
        if activity.isExpired(at: now) { finalize(id, state: .expired, reason: "expired", &out) }
        return out
    }

    mutating func invalidate(_ id: ActivityID, reason: String = "invalidated") -> Outcome {
        var out = Outcome()
        finalize(id, state: .invalidated, reason: reason, &out)
        return out
    }

    /// The app holding `token` is gone: what it owns goes with it.
    mutating func sessionEnded(_ token: String) -> Outcome {
        var out = Outcome()
        let owned = entries.filter { $0.value.owner == .session(token) && !Self.isFinal($0.value.state) }
        for id in owned.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            finalize(id, state: .invalidated, reason: "owner-session-ended", &out)
        }
        return out
    }

    /// Everything whose expiration date has come.
    mutating func expire(at now: Timestamp) -> Outcome {
        var out = Outcome()
        for (id, e) in entries.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where !Self.isFinal(e.state) && e.activity.isExpired(at: now) {
            finalize(id, state: .expired, reason: "expired", &out)
        }
        return out
    }

    // MARK: - Internals

    private mutating func makeCurrent(_ id: ActivityID, _ out: inout Outcome) {
        if let old = currentID, old != id, entries[old]?.state == .current {
            entries[old]!.state = .resigned
            out.events.append(.resigned(Self.record(entries[old]!)))
        }
        entries[id]!.state = .current
        currentID = id
        out.events.append(.becameCurrent(Self.record(entries[id]!)))
    }

    private mutating func finalize(_ id: ActivityID, state: ActivityState, reason: String, _ out: inout Outcome) {
        guard var e = entries[id], !Self.isFinal(e.state) else { return }
        if currentID == id { currentID = nil }
        e.state = state
        entries[id] = e
        out.ended.append((id, state))
        out.events.append(state == .expired ? .expired(Self.record(e)) : .invalidated(Self.record(e), reason: reason))
        // Only the final state's id and small metadata stay, for clear errors later.
        finalOrder.append(id)
        if finalOrder.count > rememberedFinalActivities {
            entries[finalOrder.removeFirst()] = nil
        }
    }

    /// Apps that keep making activities without invalidating them must not grow memory:
    /// beyond the cap the owner's oldest non-current activity is invalidated.
    private mutating func evictBeyondCap(owner: ActivityOwner, keeping: ActivityID, _ out: inout Outcome) {
        let live = entries.values.filter { $0.owner == owner && !Self.isFinal($0.state) && $0.activity.id != keeping && $0.state != .current }
        let total = entries.values.filter { $0.owner == owner && !Self.isFinal($0.state) }.count
        guard total > maximumActivitiesPerOwner else { return }
        for e in live.sorted(by: { $0.activity.updatedAt < $1.activity.updatedAt }).prefix(total - maximumActivitiesPerOwner) {
            finalize(e.activity.id, state: .invalidated, reason: "evicted", &out)
        }
    }
}
