import Dispatch
import Logging
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// Carries out the daemon's state-file changes away from the actors and the event loop:
/// no call of the file system runs on them, so a disk that hangs (a busy one, a home on a
/// network file system that stopped answering) delays the changes and the requests that
/// made them (`settle`), not every request, link and stream of the daemon.
///
/// Two ways to change a file:
/// - `write` queues the whole change: temporary file, fsync, rename, the directory's
///   fsync. What it meets (a full disk too) is logged and reported by `settle`.
/// - `prepare` (awaited: the temporary file, on a queue of its own) and then `commit`, for
///   a change that must be refused, with nothing changed, when its file cannot be written.
/// - `writeAhead` (awaited) does both as one step in the queue's order, for a caller that
///   need not look at anything between them: one trip to the disk's thread, not two.
///
/// Changes are carried out in the order they were queued (`write` and `commit` number them),
/// so the last one asked for is the one left in place; `remove` is queued the same way.
final class StateWriter: Sendable {
    static let shared = StateWriter()

    /// The changes one control request asks for: the control server binds a list around
    /// each request and waits for what lands in it before answering.
    @TaskLocal static var requestTickets: Tickets?

    final class Tickets: Sendable {
        private let box = NIOLockedValueBox<[UInt64]>([])
        init() {}
        func add(_ ticket: UInt64) { box.withLockedValue { $0.append(ticket) } }
        var all: [UInt64] { box.withLockedValue { $0 } }
    }

    private enum Change: Sendable {
        /// Content whose temporary file is written already.
        case commit(AtomicFile.Pending)
        /// Content still to be written to a temporary file.
        case write([UInt8], path: String, mode: mode_t)
        case remove(String)
        /// Content to write ahead of a change, and the caller waiting to hear how it went.
        case ahead([UInt8], path: String, mode: mode_t, claim: AheadClaim, CheckedContinuation<AheadOutcome, Never>)

        var path: String {
            switch self {
            case .commit(let p): p.path
            case .write(_, let path, _): path
            case .remove(let path): path
            case .ahead(_, let path, _, _, _): path
            }
        }
    }

    /// What a change written ahead was decided from, as the writer's thread asks it.
    struct AheadClaim: Sendable {
        /// Whether it still stands: asked before anything is written, so that a change
        /// left behind while it was queued costs no write.
        let stands: @Sendable () -> Bool
        /// Whether it still stands, and if so that nothing else decided from the same
        /// state may claim it any more: asked once the content is flushed, just before the
        /// rename.
        let take: @Sendable () -> Bool
    }

    enum AheadOutcome: Sendable {
        /// In place (or its flush failed, which `settle` reports as for `write`).
        case written
        /// Its claim failed: what it was decided from changed meanwhile.
        case superseded
        /// The temporary file could not be written: nothing changed.
        case refused(any Error)
    }

    private struct Waiter {
        /// The tickets whose outcome is this waiter's: its own, and those that carried
        /// their content when an older change of the same file was superseded.
        var watched: Set<UInt64>
        var upTo: UInt64
        var failure: String?
        let resume: CheckedContinuation<String?, Never>
    }

    private struct State {
        var asked: UInt64 = 0
        var finished: UInt64 = 0
        /// The last change asked for, per file, while it is queued.
        var latest: [String: UInt64] = [:]
        /// Recent outcomes that waiters may still ask about.
        var failures: [UInt64: String] = [:]
        var supersededBy: [UInt64: UInt64] = [:]
        /// Files whose last flush failed: what memory says of them is not on disk.
        var failedPaths: [String: String] = [:]
        /// The content of those files, written again once the disk takes writes again.
        var unsaved: [String: (bytes: [UInt8], mode: mode_t)] = [:]
        var retryScheduled = false
        var waiters: [Waiter] = []

        /// What waiting for `tickets` means now: the tickets that carry their content (theirs,
        /// and the newer ones that superseded them, as far as known), the last of those, and
        /// a failure among them already known.
        func outcome(of tickets: [UInt64]) -> (watched: Set<UInt64>, upTo: UInt64, failure: String?) {
            var watched = Set<UInt64>()
            for ticket in tickets {
                var t: UInt64? = ticket
                while let current = t, watched.insert(current).inserted { t = supersededBy[current] }
            }
            return (watched, watched.max() ?? 0, watched.sorted().lazy.compactMap { failures[$0] }.first)
        }

        mutating func forgetOld() {
            guard failures.count + supersededBy.count > 4096, finished > 2048 else { return }
            let horizon = finished - 2048
            failures = failures.filter { $0.key >= horizon }
            supersededBy = supersededBy.filter { $0.key >= horizon }
        }
    }

    private let queue: DispatchQueue
    /// Temporary files for `prepare`: not behind the flushes of `queue`, which a disk that
    /// stalls on fsync holds up.
    private let prepareQueue = DispatchQueue(label: "handoff.state-writer.prepare")
    private let state = NIOLockedValueBox(State())
    private let logger = Logger(label: "handoffd")

    /// `queue`: where changes are carried out, in order (a test may suspend it).
    init(queue: DispatchQueue = DispatchQueue(label: "handoff.state-writer")) { self.queue = queue }

    /// Writes `bytes` to `path` as `AtomicFile.write` does, creating its directory if need
    /// be; returns at once. What the writing meets is logged and reported by `settle`.
    /// `holdingTheRequest: false`: the control request being answered does not wait for
    /// it (nor fail with it), for what is kept in memory whatever the disk does.
    func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600, holdingTheRequest: Bool = true) {
        enqueue(.write(bytes, path: path, mode: mode), holdingTheRequest: holdingTheRequest)
    }

    /// The new content in a temporary file beside `path`, written on a queue of its own
    /// while the caller waits (a full disk throws here, before anything changes). Then
    /// `commit` it, or `discard` it when what it holds is no longer right.
    func prepare(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) async throws -> AtomicFile.Pending {
        try await withCheckedThrowingContinuation { c in
            prepareQueue.async { c.resume(with: Result { try AtomicFile.prepare(bytes, to: path, mode: mode, makingDirectory: true) }) }
        }
    }

    /// Writes `bytes` to `path` ahead of a change that must be refused, with nothing changed,
    /// when its file cannot be written: the temporary file, its flush, the rename and the
    /// directory's flush, one step in the queue's order, while the caller waits. Throws when
    /// the temporary file could not be written (a full disk: nothing changed, on disk
    /// either); a flush that fails after that is reported to the request as `write`'s are.
    ///
    /// `claim` says, on the writer's thread, whether what `bytes` was decided from still
    /// stands (`AheadClaim`). When it does not, the file is left as it was and this returns
    /// false: the caller decides again. So no content decided from a state that another
    /// change has left behind is ever put in place.
    // nonsending: the caller's actor resumes straight from the writer's thread, not through
    // the global executor first.
    nonisolated(nonsending) func writeAhead(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600, claim: AheadClaim) async throws -> Bool {
        let outcome = await withCheckedContinuation { c in enqueue(.ahead(bytes, path: path, mode: mode, claim: claim, c)) }
        switch outcome {
        case .written: return true
        case .superseded: return false
        case .refused(let error): throw error
        }
    }

    /// Queues a prepared content to be flushed and put in place; returns at once.
    func commit(_ pending: AtomicFile.Pending) {
        enqueue(.commit(pending))
    }

    /// Drops a prepared content that will not be committed.
    func discard(_ pending: AtomicFile.Pending) {
        prepareQueue.async { _ = unlink(pending.temporary) }
    }

    /// Removes `path` after every change of it asked for before (which would otherwise put
    /// it back when it is flushed).
    func remove(_ path: String) {
        enqueue(.remove(path))
    }

    /// Whether a change of `path` is queued and not carried out yet.
    func pending(_ path: String) -> Bool {
        state.withLockedValue { $0.latest[path] != nil }
    }

    /// Whether the last flush of `path` failed, so that the file holds less than memory.
    func flushFailed(_ path: String) -> Bool {
        state.withLockedValue { $0.failedPaths[path] != nil }
    }

    /// Why the last flush of some state file failed, while it has not been flushed since.
    var lastFailure: (path: String, error: String)? {
        state.withLockedValue { s in s.failedPaths.min { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }

    private func enqueue(_ change: Change, holdingTheRequest: Bool = true) {
        let ticket = state.withLockedValue { s -> UInt64 in
            // Numbered and queued together, so the queue's order is the tickets' order.
            s.asked += 1
            let ticket = s.asked
            s.latest[change.path] = ticket
            queue.async { self.apply(change, ticket: ticket) }
            return ticket
        }
        if holdingTheRequest { Self.requestTickets?.add(ticket) }
    }

    private func apply(_ change: Change, ticket: UInt64) {
        let path = change.path
        // A newer change of the same file is queued behind this one: carrying this one out
        // would be undone by it. (While a disk stalls, changes then cost one flush each
        // file, not one each change.)
        let newer = state.withLockedValue { s -> UInt64? in
            let latest = s.latest[path, default: 0]
            return latest > ticket ? latest : nil
        }
        var failure: String?
        var aheadOutcome: (CheckedContinuation<AheadOutcome, Never>, AheadOutcome)?
        // Whether this change was carried out (or tried and failed): what the file holds
        // is its doing, unless a newer change follows.
        var carriedOut = newer == nil
        switch (change, newer) {
        case (.commit(let pending), .some):
            unlink(pending.temporary)
        case (.write, .some), (.remove, .some):
            break
        case (.ahead(let bytes, let path, let mode, let claim, let c), _):
            // Not skipped for a newer change: its claim says whether it still stands, and
            // a newer change queued behind it was decided without it.
            guard claim.stands() else {
                carriedOut = false
                aheadOutcome = (c, .superseded)
                break
            }
            do {
                let pending = try AtomicFile.prepare(bytes, to: path, mode: mode, makingDirectory: true, keepingOpen: true)
                do {
                    carriedOut = try AtomicFile.commit(pending, claiming: claim.take)
                } catch {
                    failure = "\(error)"
                    carriedOut = true
                }
                aheadOutcome = (c, carriedOut ? .written : .superseded)
            } catch {
                // Refused: the file is as it was, and so is what is known of it.
                carriedOut = false
                aheadOutcome = (c, .refused(error))
            }
        case (.commit(let pending), nil):
            do { try AtomicFile.commit(pending) } catch { failure = "\(error)" }
        case (.write(let bytes, let path, let mode), nil):
            do { try AtomicFile.commit(AtomicFile.prepare(bytes, to: path, mode: mode, makingDirectory: true, keepingOpen: true)) } catch { failure = "\(error)" }
        case (.remove(let path), nil):
            if unlink(path) != 0 && errno != ENOENT { failure = "cannot remove \(path): \(AtomicFile.errnoText())" }
        }
        if let failure {
            logger.error("could not save a state file", metadata: ["file": "\(path)", "error": "\(failure)"])
        }
        let content: (bytes: [UInt8], mode: mode_t)?
        switch change {
        case .commit(let p): content = (p.bytes, p.mode)
        case .write(let bytes, _, let mode), .ahead(let bytes, _, let mode, _, _): content = (bytes, mode)
        case .remove: content = nil
        }
        let decided = carriedOut && newer == nil
        // Not carried out for a newer change: the newer one carries its content.
        let supersededBy = carriedOut || aheadOutcome != nil ? nil : newer
        let ready = state.withLockedValue { s -> [(CheckedContinuation<String?, Never>, String?)] in
            if decided {
                s.unsaved[path] = failure == nil ? nil : content
            }
            s.finished = ticket
            if s.latest[path] == ticket { s.latest[path] = nil }
            if let supersededBy { s.supersededBy[ticket] = supersededBy }
            if let failure {
                s.failures[ticket] = failure
                s.failedPaths[path] = failure
            } else if decided {
                s.failedPaths[path] = nil
            }
            s.forgetOld()
            for i in s.waiters.indices where s.waiters[i].watched.contains(ticket) {
                if let supersededBy {
                    s.waiters[i].watched.insert(supersededBy)
                    s.waiters[i].upTo = max(s.waiters[i].upTo, supersededBy)
                }
                if s.waiters[i].failure == nil, let failure { s.waiters[i].failure = failure }
            }
            let due = s.waiters.filter { $0.upTo <= ticket }
            s.waiters.removeAll { $0.upTo <= ticket }
            return due.map { ($0.resume, $0.failure) }
        }
        if decided {
            if failure == nil { retryUnsaved() } else { scheduleRetry() }
        }
        if let (c, outcome) = aheadOutcome { c.resume(returning: outcome) }
        for (resume, failure) in ready { resume.resume(returning: failure) }
    }

    /// Writes again what could not be saved (a full disk, a flush that failed), for files
    /// with no newer change queued: after any change that succeeded, since the disk takes
    /// writes again, and every 30 seconds meanwhile. Runs on the queue.
    private func retryUnsaved() {
        let due = state.withLockedValue { s in s.unsaved.filter { s.latest[$0.key] == nil } }
        for (path, content) in due.sorted(by: { $0.key < $1.key }) {
            do {
                try AtomicFile.commit(AtomicFile.prepare(content.bytes, to: path, mode: content.mode, makingDirectory: true, keepingOpen: true))
            } catch {
                continue
            }
            logger.info("saved a state file that could not be saved before", metadata: ["file": "\(path)"])
            state.withLockedValue { s in
                guard s.latest[path] == nil else { return }
                s.unsaved[path] = nil
                s.failedPaths[path] = nil
            }
        }
        scheduleRetry()
    }

    private func scheduleRetry() {
        let schedule = state.withLockedValue { s -> Bool in
            guard !s.unsaved.isEmpty, !s.retryScheduled else { return false }
            s.retryScheduled = true
            return true
        }
        guard schedule else { return }
        queue.asyncAfter(deadline: .now() + Self.retryInterval) {
            self.state.withLockedValue { $0.retryScheduled = false }
            self.retryUnsaved()
        }
    }

    static let retryInterval: DispatchTimeInterval = .seconds(30)

    /// Waits until the changes with these tickets are carried out, by themselves or by a
    /// newer change of the same file, and returns why one failed, if one did. Returns at
    /// once for no tickets.
    func settle(_ tickets: [UInt64]) async -> String? {
        guard !tickets.isEmpty else { return nil }
        return await withCheckedContinuation { c in
            let now: String?? = state.withLockedValue { s in
                let (watched, upTo, failure) = s.outcome(of: tickets)
                if s.finished >= upTo { return .some(failure) }
                s.waiters.append(Waiter(watched: watched, upTo: upTo, failure: failure, resume: c))
                return nil
            }
            if let now { c.resume(returning: now) }
        }
    }

    /// Waits until every change asked for so far is carried out (before the daemon exits).
    func settleAll() async {
        let upTo = state.withLockedValue { $0.asked }
        guard upTo > 0 else { return }
        _ = await settle([upTo])
    }
}
