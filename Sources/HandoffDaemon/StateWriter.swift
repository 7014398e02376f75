import Dispatch
import Logging
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// Finishes the daemon's state-file changes away from the event loop. `write` puts the new
/// content in a temporary file at once, so a full disk is known (and the request refused)
/// before anything changes; the fsync, the rename and the directory's fsync then run on a
/// queue of their own, in the order the changes were asked for, so the last one asked for
/// is the one left in place (`remove` is queued the same way). A disk that stalls on flush
/// (a busy one, a home on a network file system) then delays those changes and the
/// requests that made them (`settle`), not every socket of the daemon, which all share one
/// event loop.
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
        case write(AtomicFile.Pending)
        case remove(String)

        var path: String {
            switch self {
            case .write(let p): p.path
            case .remove(let path): path
            }
        }
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

    private let queue = DispatchQueue(label: "handoff.state-writer")
    private let state = NIOLockedValueBox(State())
    private let logger = Logger(label: "handoffd")

    init() {}

    /// Writes `bytes` to `path` as `AtomicFile.write` does. Throws only what writing the
    /// temporary file met; what the flush meets is logged and reported by `settle`.
    func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) throws {
        enqueue(.write(try AtomicFile.prepare(bytes, to: path, mode: mode)))
    }

    /// Removes `path` after every change of it asked for before (which would otherwise put
    /// it back when it is flushed).
    func remove(_ path: String) {
        enqueue(.remove(path))
    }

    /// Whether the last flush of `path` failed, so that the file holds less than memory.
    func flushFailed(_ path: String) -> Bool {
        state.withLockedValue { $0.failedPaths[path] != nil }
    }

    /// Why the last flush of some state file failed, while it has not been flushed since.
    var lastFailure: (path: String, error: String)? {
        state.withLockedValue { s in s.failedPaths.min { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }

    private func enqueue(_ change: Change) {
        let ticket = state.withLockedValue { s -> UInt64 in
            // Numbered and queued together, so the queue's order is the tickets' order.
            s.asked += 1
            let ticket = s.asked
            s.latest[change.path] = ticket
            queue.async { self.apply(change, ticket: ticket) }
            return ticket
        }
        Self.requestTickets?.add(ticket)
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
        switch (change, newer) {
        case (.write(let pending), .some):
            unlink(pending.temporary)
        case (.remove, .some):
            break
        case (.write(let pending), nil):
            do { try AtomicFile.commit(pending) } catch { failure = "\(error)" }
        case (.remove(let path), nil):
            if unlink(path) != 0 && errno != ENOENT { failure = "cannot remove \(path): \(AtomicFile.errnoText())" }
        }
        if let failure {
            logger.error("could not save a state file", metadata: ["file": "\(path)", "error": "\(failure)"])
        }
        let ready = state.withLockedValue { s -> [(CheckedContinuation<String?, Never>, String?)] in
            s.finished = ticket
            if s.latest[path] == ticket { s.latest[path] = nil }
            if let newer { s.supersededBy[ticket] = newer }
            if let failure {
                s.failures[ticket] = failure
                s.failedPaths[path] = failure
            } else if newer == nil {
                s.failedPaths[path] = nil
            }
            s.forgetOld()
            for i in s.waiters.indices where s.waiters[i].watched.contains(ticket) {
                if let newer {
                    s.waiters[i].watched.insert(newer)
                    s.waiters[i].upTo = max(s.waiters[i].upTo, newer)
                }
                if s.waiters[i].failure == nil, let failure { s.waiters[i].failure = failure }
            }
            let due = s.waiters.filter { $0.upTo <= ticket }
            s.waiters.removeAll { $0.upTo <= ticket }
            return due.map { ($0.resume, $0.failure) }
        }
        for (resume, failure) in ready { resume.resume(returning: failure) }
    }

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
