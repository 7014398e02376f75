import Dispatch
import Logging
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// Finishes the daemon's state-file writes away from the event loop. `write` puts the new
/// content in a temporary file at once, so a full disk is known (and the request refused)
/// before anything changes; the fsync, the rename and the directory's fsync then run on a
/// queue of their own, in the order the writes were asked for, so the last one asked for
/// is the one left in place. A disk that stalls on flush (a busy one, a home on a network
/// file system) then delays those writes and the requests waiting for them (`settle`),
/// not every socket of the daemon, which all share one event loop.
final class StateWriter: Sendable {
    static let shared = StateWriter()

    private struct Waiter {
        let after: UInt64
        let upTo: UInt64
        let resume: CheckedContinuation<String?, Never>
    }

    private struct State {
        var asked: UInt64 = 0
        var finished: UInt64 = 0
        /// Recent failures by ticket, for the requests that wait for them.
        var failures: [(ticket: UInt64, error: String)] = []
        var waiters: [Waiter] = []
        /// The last write asked for, per file: an older one still queued is superseded.
        var latest: [String: UInt64] = [:]

        func failure(after: UInt64, upTo: UInt64) -> String? {
            failures.first { $0.ticket > after && $0.ticket <= upTo }?.error
        }
    }

    private let queue = DispatchQueue(label: "handoff.state-writer")
    private let state = NIOLockedValueBox(State())
    private let logger = Logger(label: "handoffd")

    /// Writes asked for so far: what a request notes before it starts, for `settle(after:)`.
    var mark: UInt64 { state.withLockedValue { $0.asked } }

    /// Writes `bytes` to `path` as `AtomicFile.write` does. Throws only what writing the
    /// temporary file met; what the flush meets is logged and reported by `settle`.
    func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) throws {
        let pending = try AtomicFile.prepare(bytes, to: path, mode: mode)
        state.withLockedValue { s in
            // Numbered and queued together, so the queue's order is the tickets' order.
            s.asked += 1
            let ticket = s.asked
            s.latest[path] = ticket
            queue.async { self.commit(pending, ticket: ticket) }
        }
    }

    private func commit(_ pending: AtomicFile.Pending, ticket: UInt64) {
        var failure: String?
        // A newer content of the same file is queued behind this one: flushing this one
        // would be undone by it. (While a disk stalls, changes then cost one flush each
        // file, not one each change.)
        let superseded = state.withLockedValue { $0.latest[pending.path, default: 0] > ticket }
        if superseded {
            unlink(pending.temporary)
        } else {
            do { try AtomicFile.commit(pending) } catch {
                failure = "\(error)"
                logger.error("could not save a state file", metadata: ["file": "\(pending.path)", "error": "\(error)"])
            }
        }
        let ready = state.withLockedValue { s -> [(CheckedContinuation<String?, Never>, String?)] in
            s.finished = ticket
            if s.latest[pending.path] == ticket { s.latest[pending.path] = nil }
            if let failure {
                s.failures.append((ticket, failure))
                if s.failures.count > 64 { s.failures.removeFirst() }
            }
            let due = s.waiters.filter { $0.upTo <= ticket }
            s.waiters.removeAll { $0.upTo <= ticket }
            return due.map { ($0.resume, s.failure(after: $0.after, upTo: $0.upTo)) }
        }
        for (resume, failure) in ready { resume.resume(returning: failure) }
    }

    /// Waits until every write asked for so far is in place, and returns why one asked for
    /// after `after` (a `mark`) failed, if one did. Returns at once when nothing is pending.
    func settle(after: UInt64 = 0) async -> String? {
        let done: String?? = state.withLockedValue { s in
            s.finished >= s.asked ? .some(s.failure(after: after, upTo: s.asked)) : nil
        }
        if let done { return done }
        return await withCheckedContinuation { c in
            let now: String?? = state.withLockedValue { s in
                if s.finished >= s.asked { return .some(s.failure(after: after, upTo: s.asked)) }
                s.waiters.append(Waiter(after: after, upTo: s.asked, resume: c))
                return nil
            }
            if let now { c.resume(returning: now) }
        }
    }
}
