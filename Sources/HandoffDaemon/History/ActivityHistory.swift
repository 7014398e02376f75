import HandoffCore
import HandoffControlAPI
import HandoffHistoryProtocol
import Logging
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// The activities this workstation and its trusted peers offered, found again by search
/// (Docs/LocalAPI.md §19). The store itself (SQLite, full-text index) lives in a helper
/// process, `handoff-history`, started at the first eligible offer or history request and
/// ended after `idleTimeout` without one: GRDB brings full Foundation and ICU, about 5 MB
/// that an always-running, mostly idle handoffd would otherwise keep resident for nothing
/// (Docs/Architecture.md, "The history helper").
public actor ActivityHistory {
    /// The type of an activity reopened from the history: no app claims it, so the page
    /// or document opens as for any activity without a handler.
    static let reopenType = "org.handoff.history"

    let directory: String
    let retentionDays: Int64
    let helperPath: String
    let idleTimeout: TimeAmount
    let requestTimeout: TimeAmount
    private let group: EventLoopGroup
    private let logger: Logger
    /// When an offer was seen, and what "now" is for searches and the retention.
    private let clock: any WallClock
    private var helper: HistoryHelperProcess?
    private var starting: Task<HistoryHelperProcess, any Error>?
    private var inFlight = 0
    private var idleTimer: Scheduled<Void>?
    /// Tells a quiet period's timer that fired late from one still current.
    private var idleGeneration = 0
    private var stopped = false
    /// Offers to record, in the order they were seen, written by one task: callers do not
    /// wait for the helper, and a stop writes what is queued before the helper ends.
    private struct Noted: Sendable {
        var offer: ActivitySummary
        var device: PeerDevice
        var local: Bool
        var at: Timestamp
    }
    private let notes: AsyncStream<Noted>.Continuation
    private let notesStream: AsyncStream<Noted>
    private var recorder: Task<Void, Never>?
    private var expiry: RepeatedTask?

    init(directory: String, retentionDays: Int64, helperPath: String = HistoryHelperProcess.defaultPath(),
         idleTimeout: TimeAmount = .seconds(60), requestTimeout: TimeAmount = .seconds(10),
         group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton, clock: any WallClock = SystemClock(), logger: Logger) {
        self.clock = clock
        self.directory = directory
        self.retentionDays = retentionDays
        self.helperPath = helperPath
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.group = group
        self.logger = logger
        (notesStream, notes) = AsyncStream<Noted>.makeStream(bufferingPolicy: .bufferingNewest(1024))
    }

    /// Starts writing what `note` queues, and dropping what is past the retention every
    /// six hours. Not at start: the helper also expires whenever it starts, and starting
    /// it for nothing would cost its memory.
    func start() {
        guard recorder == nil else { return }
        expiry = group.any().scheduleRepeatedTask(initialDelay: .hours(6), delay: .hours(6)) { [weak self] _ in
            guard let self else { return }
            Task { await self.expire() }
        }
        let stream = notesStream
        recorder = Task { [weak self] in
            for await n in stream {
                guard let self else { return }
                await self.record(n.offer, device: n.device, local: n.local, at: n.at)
            }
        }
    }

    /// Queues an offer to record (ours or a peer's) and returns at once; offers not
    /// eligible for search are dropped here, without starting the helper. At most the
    /// newest 1024 wait, should the helper be slow.
    nonisolated func note(_ offer: ActivitySummary, device: PeerDevice, local: Bool, at now: Timestamp? = nil) {
        guard offer.search != nil else { return }
        notes.yield(Noted(offer: offer, device: device, local: local, at: now ?? clock.now()))
    }

    /// The helper's process ID while it runs (diagnostics, tests).
    var helperPID: pid_t? { helper?.isActive == true ? helper?.pid : nil }

    /// Notes an offer (ours or a peer's). Not eligible for search: nothing is kept, and
    /// the helper is not started for it.
    func record(_ offer: ActivitySummary, device: PeerDevice, local: Bool, at now: Timestamp? = nil) async {
        guard offer.search != nil else { return }
        do { _ = try await call(.record(offer, device: device, local: local, at: now ?? clock.now())) } catch {
            logger.warning("could not record an activity in the history", metadata: ["error": "\(error.message)"])
        }
    }

    func search(_ q: HistoryQuery, at now: Timestamp? = nil) async throws(HandoffError) -> [HistoryEntry] {
        let value = try await call(.search(q, at: now ?? clock.now()))
        do { return try HistoryEntry.list(json: value) } catch { throw HistoryFailure.badReply(error) }
    }

    /// The entry and its document reference (to reopen it).
    func entry(_ id: Int64) async throws(HandoffError) -> (HistoryEntry, DocumentReference?)? {
        let value = try await call(.entry(id))
        do { return try HistoryHelperReply.entry(json: value) } catch { throw HistoryFailure.badReply(error) }
    }

    /// Drops what is older than the retention; returns how many (0 if that failed: it is
    /// tried again next time, and searches never show those entries anyway).
    @discardableResult
    func expire(at now: Timestamp? = nil) async -> Int {
        do { return try integer(await call(.expire(at: now ?? clock.now()))) } catch {
            logger.warning("could not drop old history entries", metadata: ["error": "\(error.message)"])
            return 0
        }
    }

    /// Forgets everything; returns how many entries there were.
    func clear() async throws(HandoffError) -> Int { try integer(await call(.clear)) }

    /// Forgets one origin's activities with these persistent identifiers (nil: all of its).
    func forget(device: String, persistentIdentifiers ids: [String]?) async throws(HandoffError) -> Int {
        try integer(await call(.forget(device: device, persistentIdentifiers: ids)))
    }

    func count() async throws(HandoffError) -> Int { try integer(await call(.count)) }

    /// At shutdown: what is queued is recorded, then the helper's input closes and it exits.
    func stop() async {
        expiry?.cancel()
        notes.finish()
        await recorder?.value
        stopped = true
        idleTimer?.cancel()
        helper?.close()
        helper = nil
    }

    private func integer(_ value: JSONValue) throws(HandoffError) -> Int {
        guard case .integer(let n) = value else { throw HistoryFailure.badReply(ValidationError(field: "reply.ok", problem: "is not an integer")) }
        return Int(n)
    }

    /// One request, on the running helper or a new one. A helper that died since (killed,
    /// crashed) is started again once: every request is safe to repeat.
    private func call(_ request: HistoryHelperRequest) async throws(HandoffError) -> JSONValue {
        guard !stopped else { throw HandoffError(.unavailable, code: "shutting_down", message: "handoffd is shutting down") }
        inFlight += 1
        idleTimer?.cancel()
        idleTimer = nil
        defer {
            inFlight -= 1
            if inFlight == 0 { scheduleIdleStop() }
        }
        var attempt = 0
        while true {
            attempt += 1
            let process = try await running()
            let reply: HistoryHelperReply
            do {
                reply = try await process.send(request, timeout: requestTimeout)
            } catch {
                if helper === process { helper = nil }
                process.close()
                if attempt < 2 && !(error is HistoryHelperTimeout) {
                    logger.warning("the history helper went away; starting it again", metadata: ["pid": "\(process.pid)", "error": "\(error)"])
                    continue
                }
                throw HandoffError(.unavailable, code: "history_unavailable", message: "the history did not answer: \(error); see journalctl --user -u handoffd")
            }
            switch reply {
            case .ok(let value): return value
            case .failed(let code, let message):
                throw HandoffError(.internal, code: code, message: "the history failed: \(message)")
            }
        }
    }

    private func running() async throws(HandoffError) -> HistoryHelperProcess {
        if let helper, helper.isActive { return helper }
        if let starting {
            do { return try await starting.value } catch { throw error as? HandoffError ?? HistoryFailure.other(error) }
        }
        let (path, directory, days, group) = (helperPath, directory, retentionDays, group)
        let task = Task { () async throws -> HistoryHelperProcess in
            try await HistoryHelperProcess.start(path: path, directory: directory, retentionDays: days, group: group)
        }
        starting = task
        defer { starting = nil }
        do {
            let process = try await task.value
            helper = process
            logger.debug("history helper started", metadata: ["pid": "\(process.pid)"])
            return process
        } catch {
            let e = error as? HandoffError ?? HistoryFailure.other(error)
            logger.error("the activity history is unavailable", metadata: ["error": "\(e.message)"])
            throw e
        }
    }

    private func scheduleIdleStop() {
        guard helper != nil, !stopped else { return }
        idleGeneration += 1
        let generation = idleGeneration
        idleTimer = group.any().scheduleTask(in: idleTimeout) { [weak self] in
            guard let self else { return }
            Task { await self.idleStop(generation) }
        }
    }

    private func idleStop(_ generation: Int) {
        guard generation == idleGeneration, inFlight == 0, let helper else { return }
        logger.debug("history helper ended after a quiet period", metadata: ["pid": "\(helper.pid)"])
        helper.close()
        self.helper = nil
        idleTimer = nil
    }
}

enum HistoryFailure {
    static func badReply(_ error: ValidationError) -> HandoffError {
        HandoffError(.internal, code: "history_failed", message: "the history helper answered something unreadable: \(error)")
    }

    static func other(_ error: any Error) -> HandoffError {
        HandoffError(.unavailable, code: "history_unavailable", message: "the history is unavailable: \(error)")
    }
}
