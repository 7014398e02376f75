import HandoffCore
import HandoffControlAPI
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The activities of this device and who owns them: one is current at a time, sessions
/// (apps holding an event stream) own theirs, and changes go out as events.
///
/// Everything that decides what an activity is lives here; the HTTP layer only
/// translates. No timers run unless something is due: expiry sleeps until the next
/// expiration date, will-save until its deadline.
public actor ActivityRegistry {
    typealias Entry = ActivityTable.Entry

    struct PendingSave {
        let saveID: String
        var waiters: [CheckedContinuation<Result<ActivityRecord, HandoffError>, Never>]
        let timeout: ScheduledTimer
    }

    let clock: any WallClock
    private let timers: any Timers

    public struct Settings: Sendable {
        public var device: DeviceRef
        public var limits: ActivityLimits
        public var willSaveTimeout: Duration
        /// Live (non-final) activities a session, or the daemon, may hold before the oldest
        /// non-current one is dropped.
        public var maximumActivitiesPerOwner: Int
        /// How many invalidated or expired ids are remembered, so late calls get a clear 410.
        public var rememberedFinalActivities: Int
        /// An activity made without an owning session (`handoffctl become-current`, a
        /// script) and without an expiration date expires this long after it is made, so a
        /// forgotten one is not offered for days. nil: never.
        public var unownedExpiry: Duration?
        /// The host a terminal activity (`handoff.terminal`) names when its app did not:
        /// what the other workstations ssh to (`ssh-host`, else the host name).
        public var sshHost: String = DaemonConfiguration.hostName()

        public init(device: DeviceRef, limits: ActivityLimits = ActivityLimits(), willSaveTimeout: Duration = .milliseconds(500),
                    maximumActivitiesPerOwner: Int = 32, rememberedFinalActivities: Int = 1024, unownedExpiry: Duration? = .seconds(12 * 3600)) {
            self.unownedExpiry = unownedExpiry
            self.device = device
            self.limits = limits
            self.willSaveTimeout = willSaveTimeout
            self.maximumActivitiesPerOwner = maximumActivitiesPerOwner
            self.rememberedFinalActivities = rememberedFinalActivities
        }
    }

    public let settings: Settings
    private let store: ActivityStore?
    private let logger: Logger
    var events = EventHub()
    private var lastSaved: SavedActivities?

    /// What is decided: the activities, their states and owners (no I/O, no time).
    private(set) var table: ActivityTable { didSet { version.withLockedValue { $0 &+= 1 } } }
    /// Counts the table's changes, and the saves ahead that claimed the file (`saveAhead`):
    /// the writer's thread reads it too. A save ahead that waited for the disk knows from it
    /// whether the table changed meanwhile (the actor takes other calls while it waits).
    private let version = NIOLockedValueBox<UInt64>(0)
    private var pendingSaves: [ActivityID: PendingSave] = [:]
    private var expiryTask: ScheduledTimer?
    private var expiryDue: Timestamp?
    /// Locked, not actor state: a watcher that ends removes itself there and then. (It
    /// used to start a task holding the registry weakly; at a stop, with that task not yet
    /// run, LeakSanitizer found the weak reference's side table leaked.)
    private let offerWatchers = NIOLockedValueBox<[Int: AsyncStream<OfferedActivity?>.Continuation]>([:])
    private var nextWatcher = 0
    private(set) var lastOffer: OfferedActivity?
    /// The activity offered to peers ahead of its save (`saveAhead`), as the change will
    /// make it, by which save offered it: a peer that fetches it meanwhile is served this.
    private(set) var offeredAhead: [ActivityID: (save: UInt64, entry: Entry)] = [:]
    private var aheadSaves: UInt64 = 0
    /// `saveAhead` saved what the table is about to become, and its caller's `persist()`,
    /// right after the change, has not run yet.
    private var savedAhead = false
    /// A change written ahead is under way; who waits for their turn (`aheadTurn`).
    private var aheadBusy = false
    private var aheadWaiting: [CheckedContinuation<Void, Never>] = []
    public init(settings: Settings, store: ActivityStore?, logger: Logger) {
        self.init(settings: settings, store: store, logger: logger, clock: SystemClock(),
                  timers: EventLoopTimers(loop: MultiThreadedEventLoopGroup.singleton.any()))
    }

    init(settings: Settings, store: ActivityStore?, logger: Logger, clock: any WallClock, timers: any Timers) {
        self.settings = settings
        self.store = store
        self.logger = logger
        self.clock = clock
        self.timers = timers
        table = ActivityTable(maximumActivitiesPerOwner: settings.maximumActivitiesPerOwner,
                              rememberedFinalActivities: settings.rememberedFinalActivities)
    }

    // MARK: - Start-up

    /// Brings back the daemon-owned activities saved before a restart (crash included).
    public func restore() {
        guard let store else { return }
        var saved = store.load(logger: logger)
        lastSaved = saved
        // This workstation's own: they come back under the name and identity it has now
        // (a renamed workstation, or a new identity after `pair --new-identity`).
        for i in saved.activities.indices { saved.activities[i].activity.origin = settings.device }
        table.restore(saved, at: clock.now())
        if !table.entries.isEmpty {
            logger.info("restored saved activities", metadata: ["count": "\(table.entries.count)", "current": "\(table.currentID?.rawValue ?? "none")"])
        }
        rescheduleExpiry()
        offerChanged()
    }

    // MARK: - Queries

    public var current: ActivityRecord? { table.current.map(record) }

    public func all() -> [ActivityRecord] { table.live.map(record) }

    public func get(_ ref: String) throws(HandoffError) -> ActivityRecord {
        record(try table.entry(ref, allowFinal: true))
    }

    public var sessionCount: Int { events.sessionCount }

    /// Told when a session ends (stream requests waiting for that owner fail at once).
    private var sessionClosed: (@Sendable (String) -> Void)?

    public func onSessionClosed(_ handler: @escaping @Sendable (String) -> Void) { sessionClosed = handler }

    // MARK: - Sessions

    public func openSession() -> (token: String, events: AsyncStream<ControlEvent>) {
        events.open()
    }

    /// The app is gone: its activities go with it.
    public func closeSession(_ token: String) {
        guard events.close(token) else { return }
        sessionClosed?(token)
        let outcome = table.sessionEnded(token)
        perform(outcome)
        if !outcome.ended.isEmpty { logger.debug("session ended", metadata: ["session": "\(token)", "invalidated": "\(outcome.ended.count)"]) }
        persist()
    }

    // MARK: - Lifecycle

    public func becomeCurrent(_ draft: ActivityDraft, session: String?, streamFile: String? = nil,
                              document: (file: String, reference: DocumentReference)? = nil, targets: [DeviceID] = []) async throws(HandoffError) -> ActivityRecord {
        let turn = await aheadTurn(session == nil)
        defer { endTurn(turn) }
        while true {
            if let made = try await becomeCurrentOnce(draft, session: session, streamFile: streamFile, document: document, targets: targets) { return made }
        }
    }

    /// Nil when the table changed while the new state was being written: start again.
    private func becomeCurrentOnce(_ draft: ActivityDraft, session: String?, streamFile: String?,
                                   document: (file: String, reference: DocumentReference)?, targets: [DeviceID]) async throws(HandoffError) -> ActivityRecord? {
        let owner: ActivityOwner
        if let session {
            guard events.isOpen(session) else { throw HandoffError.unknownSession(session) }
            owner = .session(session)
        } else {
            owner = .daemon
        }
        let now = clock.now()
        var activity = draft.makeActivity(id: .random(), now: now, origin: settings.device)
        if owner == .daemon, activity.expirationDate == nil, let ttl = settings.unownedExpiry {
            activity.expirationDate = now.adding(nanoseconds: Int64(ttl.components.seconds) * 1_000_000_000)
        }
        if streamFile != nil { activity.supportsContinuationStreams = true }
        if let document { activity.userInfo[DocumentReference.userInfoKey] = document.reference.propertyValue }
        if activity.activityType == WellKnownActivityType.terminal, activity.userInfo["host"] == nil {
            activity.userInfo["host"] = .string(settings.sshHost)
        }
        try validate(activity)
        try StreamSourceRules.check(activity, owner: owner, streamFile: streamFile)
        if activity.isExpired(at: now) {
            throw HandoffError(.invalid, code: "invalid_activity", message: "expirationDate: \(activity.expirationDate!) is already past")
        }
        let entry = Entry(activity: activity, state: .resigned, owner: owner, streamFile: streamFile, documentFile: document?.file, targets: targets)
        let replaced = owner == .daemon ? table.terminals(replacedBy: activity) : []
        if owner == .daemon {
            let saved = try await saveAhead("the activity") { t in
                _ = t.add(entry)
                for id in replaced { _ = t.invalidate(id) }
            }
            guard saved else { return nil }
        }
        perform(table.add(entry))
        for id in replaced { perform(table.invalidate(id)) }
        rescheduleExpiry()
        persist()
        return record(table.entries[activity.id]!)
    }

    /// Makes an existing (resigned) activity current again.
    public func becomeCurrent(existing ref: String) async throws(HandoffError) -> ActivityRecord {
        let turn = await aheadTurn((try? table.entry(ref, allowFinal: false))?.owner == .daemon)
        defer { endTurn(turn) }
        while true {
            let e = try table.entry(ref, allowFinal: false)
            if e.owner == .daemon, e.state != .current {
                guard try await saveAhead("the change", { _ = $0.becomeCurrent(e.activity.id) }) else { continue }
            }
            perform(table.becomeCurrent(e.activity.id))
            persist(holdingTheRequest: e.owner == .daemon)
            return record(table.entries[e.activity.id]!)
        }
    }

    public func resign(_ ref: String) throws(HandoffError) -> ActivityRecord {
        let e = try table.entry(ref, allowFinal: false)
        perform(table.resign(e.activity.id))
        persist(holdingTheRequest: e.owner == .daemon)
        return record(table.entries[e.activity.id]!)
    }

    public func update(_ ref: String, _ update: ActivityUpdate) async throws(HandoffError) -> ActivityRecord {
        let turn = await aheadTurn((try? table.entry(ref, allowFinal: false))?.owner == .daemon)
        defer { endTurn(turn) }
        while true {
            if let updated = try await updateOnce(ref, update) { return updated }
        }
    }

    /// Nil when the table changed while the new state was being written: start again.
    private func updateOnce(_ ref: String, _ update: ActivityUpdate) async throws(HandoffError) -> ActivityRecord? {
        let e = try table.entry(ref, allowFinal: false)
        let now = clock.now()
        if case .some(.some(let expiry)) = update.expirationDate, expiry <= now {
            throw HandoffError(.invalid, code: "invalid_activity", message: "expirationDate: \(expiry) is already past; invalidate the activity to end it now")
        }
        var updated = update.applied(to: e.activity, now: now)
        // The document reference belongs to the file, not to what the app writes in userInfo.
        if e.documentFile != nil, let reference = e.activity.userInfo[DocumentReference.userInfoKey] {
            updated.userInfo[DocumentReference.userInfoKey] = reference
        }
        let answersSave = pendingSaves[e.activity.id] != nil
        if answersSave && update.needsSave == nil { updated.needsSave = false }
        try validate(updated)
        try StreamSourceRules.check(updated, owner: e.owner, streamFile: e.streamFile)
        if e.owner == .daemon {
            guard try await saveAhead("the update", { _ = $0.update(e.activity.id, to: updated, at: now) }) else { return nil }
        }
        var outcome = table.update(e.activity.id, to: updated, at: now)
        // The owner's save is answered with the new payload, after its `updated` event and
        // before an expiry the update brings.
        if answersSave, let r = outcome.updated {
            events.broadcast(outcome.events.removeFirst())
            resolveSave(e.activity.id, with: .success(withStale(r, false)))
        }
        perform(outcome)
        rescheduleExpiry()
        persist()
        return record(table.entries[e.activity.id]!)
    }

    public func invalidate(_ ref: String) throws(HandoffError) -> ActivityRecord {
        let e = try table.entry(ref, allowFinal: false)
        perform(table.invalidate(e.activity.id))
        persist(holdingTheRequest: e.owner == .daemon)
        return record(table.entries[e.activity.id]!)
    }

    // MARK: - Fresh snapshot (will-save)

    /// The activity with a payload as fresh as its owner can make it. When needsSave is
    /// set and the owning session is alive, the owner gets will-save and this waits for its
    /// update, at most `willSaveTimeout`; then the last payload is served with `stale: true`.
    public func snapshot(_ ref: String) async throws(HandoffError) -> ActivityRecord {
        let e = try table.entry(ref, allowFinal: false)
        let id = e.activity.id
        guard e.activity.needsSave else { return withStale(record(e), false) }
        guard case .session(let token) = e.owner, events.isOpen(token) else {
            return withStale(record(e), true)  // nobody can refresh it
        }
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<ActivityRecord, HandoffError>, Never>) in
            if pendingSaves[id] != nil {
                pendingSaves[id]!.waiters.append(c)
                return
            }
            let saveID = ActivityID.random().rawValue
            let task = timers.schedule(in: settings.willSaveTimeout) { [weak self] in
                _ = Task { await self?.saveTimedOut(id, saveID: saveID) }
            }
            pendingSaves[id] = PendingSave(saveID: saveID, waiters: [c], timeout: task)
            events.send(.willSave(activityID: id, saveID: saveID), to: token)
        }
        return try result.get()
    }

    private func saveTimedOut(_ id: ActivityID, saveID: String) {
        guard let pending = pendingSaves[id], pending.saveID == saveID, let e = table.entries[id] else { return }
        logger.info("owner did not answer will-save in time; serving the last payload", metadata: ["activity": "\(id)"])
        resolveSave(id, with: .success(withStale(record(e), true)))
    }

    private func resolveSave(_ id: ActivityID, with result: Result<ActivityRecord, HandoffError>) {
        guard let pending = pendingSaves.removeValue(forKey: id) else { return }
        pending.timeout.cancel()
        for w in pending.waiters { w.resume(returning: result) }
    }

    // MARK: - Internals

    /// What the table decided goes out: events to every session, and the pending saves of
    /// activities that ended fail.
    private func perform(_ outcome: ActivityTable.Outcome) {
        for (id, state) in outcome.ended {
            resolveSave(id, with: .failure(state == .expired ? .expired(id) : .invalidated(id)))
        }
        for event in outcome.events { events.broadcast(event) }
    }

    private func validate(_ a: Activity) throws(HandoffError) {
        do {
            try ActivityValidation.validate(a, limits: settings.limits)
            // Another workstation will run ssh from it: checked here as it will be there.
            if a.activityType == WellKnownActivityType.terminal { _ = try TerminalSession(userInfo: a.userInfo) }
        } catch { throw HandoffError.invalid(error) }
    }

    private func record(_ e: Entry) -> ActivityRecord { ActivityTable.record(e) }

    private func withStale(_ r: ActivityRecord, _ stale: Bool) -> ActivityRecord {
        var r = r
        r.stale = stale
        return r
    }

    /// One timer, for the next expiration date only.
    private func rescheduleExpiry() {
        let next = table.nextExpiry
        guard next != expiryDue else { return }
        expiryTask?.cancel()
        expiryDue = next
        guard let next else { expiryTask = nil; return }
        let wait = max(0, clock.now().nanoseconds(until: next))
        // Weak in the timer's own closure too: a pending expiry must not keep the registry
        // alive (a `[weak self]` only in the inner task still captured it strongly).
        expiryTask = timers.schedule(in: .nanoseconds(wait)) { [weak self] in
            _ = Task { await self?.expireDue() }
        }
    }

    private func expireDue() {
        perform(table.expire(at: clock.now()))
        expiryDue = nil
        rescheduleExpiry()
        persist()
    }

    /// Daemon-owned activities survive restarts; session-owned ones die with their app anyway.
    /// A save that fails here (a removal on a full disk) is logged and tried again at the
    /// next change: `lastSaved` still differs. So is one whose flush failed later.
    /// `holdingTheRequest`: the control request being answered waits for the save and fails
    /// with it (a change the user asked of a saved activity); otherwise a save that fails is
    /// logged, reported by the doctor, and made again at the next change (an app's own
    /// activity resigning the saved one must not fail the app's request).
    private func persist(holdingTheRequest: Bool = false) {
        // Every mutation ends here, so this is where peers hear of changes: once the save
        // is asked for. A crash before it is flushed loses an offer peers may have seen;
        // their link to this daemon ends with it, and with the link, the offer there.
        defer { offerChanged() }
        guard let store else { return }
        // Just written ahead, and made since with nothing between: the table is what was
        // saved, and working that out again costs a walk over every entry it remembers.
        if savedAhead {
            savedAhead = false
            return
        }
        let snapshot = table.saved
        forgetUnflushedSave(store)
        guard snapshot != lastSaved else { return }
        store.save(snapshot, holdingTheRequest: holdingTheRequest)
        lastSaved = snapshot
    }

    /// Saves what `change` will make of the daemon-owned activities before anything
    /// changes, for changes that must survive a restart (making or changing one): on a
    /// full disk the request is refused and nothing changes, rather than keeping in
    /// memory what a restart would lose. `persist()` afterwards finds the same snapshot
    /// and writes nothing more. The file is written off the actor (a disk that hangs holds
    /// up this change only); returns false when the table changed meanwhile: the caller
    /// checks the request again against the table as it is now.
    ///
    /// Peers are offered what the change makes at once, not after the disk: the offer is
    /// withdrawn if the change is refused (a full disk shows as the temporary file's write
    /// fails, within a millisecond), and a peer that fetches it meanwhile gets it.
    private func saveAhead(_ what: String, _ change: (inout ActivityTable) -> Void) async throws(HandoffError) -> Bool {
        guard let store else { return true }
        var changed = table
        change(&changed)
        let snapshot = changed.saved
        forgetUnflushedSave(store)
        guard snapshot != lastSaved else { return true }
        let seen = version.withLockedValue { $0 }
        let ahead = offerAhead(changed)
        let written: Bool
        // Put in place only if the table is still as `snapshot` was decided from, and then
        // no other save decided from it is (what makes a full disk refuse with nothing
        // changed, and keeps an older state from landing over a newer one).
        let claim = StateWriter.AheadClaim(stands: { [version] in version.withLockedValue { $0 == seen } }, take: { [version] in
            version.withLockedValue { v in
                guard v == seen else { return false }
                v &+= 1
                return true
            }
        })
        logger.debug("writing activities ahead of a change", metadata: ["change": "\(what)"])
        do {
            written = try await store.writeAhead(snapshot, claim: claim)
        } catch {
            endAhead(ahead, withdrawing: true)
            logger.error("could not save activities; the request is refused", metadata: ["error": "\(error)"])
            throw .notSaved(what, error)
        }
        guard written, version.withLockedValue({ $0 }) == seen &+ 1 else {
            endAhead(ahead, withdrawing: true)
            return false
        }
        // The caller makes the change before anything else runs here: what was offered stands,
        // and its `persist()` finds the table as saved.
        endAhead(ahead, withdrawing: false)
        lastSaved = snapshot
        savedAhead = true
        return true
    }

    /// Changes written ahead take turns, in the order they came: each is decided from the
    /// table as the one before left it, so none is decided twice for another's sake (they
    /// all would be, over and over, with their claims racing; and a request resumed from
    /// the disk may reach the actor after one that came later). Other changes do not wait.
    private func aheadTurn(_ needed: Bool) async -> Bool {
        guard needed, store != nil else { return false }
        if aheadBusy {
            logger.debug("a change to save waits for the one before it", metadata: ["waiting": "\(aheadWaiting.count + 1)"])
            await withCheckedContinuation { aheadWaiting.append($0) }
        } else {
            aheadBusy = true
        }
        return true
    }

    private func endTurn(_ turn: Bool) {
        guard turn else { return }
        if aheadWaiting.isEmpty { aheadBusy = false } else { aheadWaiting.removeFirst().resume() }
    }

    /// Offers peers what `changed` offers, ahead of its save; nil if that is what they have.
    private func offerAhead(_ changed: ActivityTable) -> UInt64? {
        let offer = changed.offer(at: clock.now())
        guard offer != lastOffer else { return nil }
        aheadSaves += 1
        if let offer, let entry = changed.entries[offer.id] { offeredAhead[offer.id] = (aheadSaves, entry) }
        publish(offer)
        return aheadSaves
    }

    /// A save ahead ended; `withdrawing`: its change was not made, so peers are offered
    /// what the table offers again.
    private func endAhead(_ save: UInt64?, withdrawing: Bool) {
        if let save { offeredAhead = offeredAhead.filter { $0.value.save != save } }
        if withdrawing { offerChanged() }
    }

    /// A save whose flush failed (after the request that made it was answered 507) is not
    /// on disk: the same snapshot must be written again, not skipped as saved.
    private func forgetUnflushedSave(_ store: ActivityStore) {
        if store.writer.flushFailed(store.path) { lastSaved = nil }
    }

    // MARK: - What peers see

    /// The activity offered to other workstations: the current one, if eligible for
    /// handoff and not expired. The stream yields it now and whenever it changes.
    public func watchOffer() -> AsyncStream<OfferedActivity?> {
        let (stream, c) = AsyncStream.makeStream(of: OfferedActivity?.self, bufferingPolicy: .bufferingNewest(1))
        let key = nextWatcher
        nextWatcher += 1
        offerWatchers.withLockedValue { $0[key] = c }
        c.yield(lastOffer)
        c.onTermination = { [offerWatchers] _ in _ = offerWatchers.withLockedValue { $0.removeValue(forKey: key) } }
        return stream
    }

    private func offerChanged() { publish(table.offer(at: clock.now())) }

    private func publish(_ offer: OfferedActivity?) {
        guard offer != lastOffer else { return }
        lastOffer = offer
        for c in offerWatchers.withLockedValue({ Array($0.values) }) { c.yield(offer) }
    }

    /// Tells an owner session that a stream is asked for; false when the session is gone.
    public func askForStream(_ event: ControlEvent, owner token: String) -> Bool {
        send(event, toSession: token)
    }

    /// An event for one session only; false when that session is gone.
    public func send(_ event: ControlEvent, toSession token: String) -> Bool {
        guard events.isOpen(token) else { return false }
        events.send(event, to: token)
        return true
    }

    public func isSessionOpen(_ token: String) -> Bool { events.isOpen(token) }

    /// Events that start outside the registry (peers, continuing) go out the same way.
    public func broadcast(_ event: ControlEvent) {
        events.broadcast(event)
    }

    public func shutdown() {
        for c in offerWatchers.withLockedValue({ w in defer { w.removeAll() }; return Array(w.values) }) { c.finish() }
        expiryTask?.cancel()
        for id in Array(pendingSaves.keys) {
            resolveSave(id, with: .failure(HandoffError(.unavailable, code: "shutting_down", message: "handoffd is shutting down")))
        }
        events.closeAll()
    }
}
