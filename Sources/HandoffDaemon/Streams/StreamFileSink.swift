import HandoffSystem
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// The continuing side's file when the app asked handoffd to write the stream (`into`):
/// what the origin sends goes from the TLS connection straight into the file, instead of
/// through the app's connection and the app (a copy and a process fewer per byte).
///
/// Writes happen on NIO's thread pool, never on an event loop (a disk may stall). Pieces
/// queue while one write runs and the next write takes them all, so the event loop goes on
/// decrypting while the pool writes; `write` waits only while a full `queuedBytes` is
/// unwritten, which bounds the memory a stream holds here.
final class StreamFileSink: Sendable {
    static let queuedBytes = 1 << 20

    let path: String
    private let fd: CInt
    private let state = NIOLockedValueBox(State())

    private struct State {
        var pending: [ByteBuffer] = []
        /// Queued or being written.
        var unwritten = 0
        var written: Int64 = 0
        var writing = false
        var closing = false
        var failure: StreamFailure?
        /// The failed write's errno text, without the path (the origin hears this).
        var reason: String?
        var waiters: [(Condition, CheckedContinuation<Void, Never>)] = []

        func holds(_ c: Condition) -> Bool {
            switch c {
            case .room: failure != nil || unwritten < StreamFileSink.queuedBytes
            case .idle: !writing
            }
        }

        /// Takes the waiters whose condition holds now.
        mutating func ready() -> [CheckedContinuation<Void, Never>] {
            var out: [CheckedContinuation<Void, Never>] = []
            var keep: [(Condition, CheckedContinuation<Void, Never>)] = []
            for w in waiters {
                if holds(w.0) { out.append(w.1) } else { keep.append(w) }
            }
            waiters = keep
            return out
        }
    }

    private enum Condition { case room, idle }

    private init(path: String, fd: CInt) {
        self.path = path
        self.fd = fd
    }

    /// Opens the file the app named. Only an empty regular file (the app made it, and keeps
    /// the right to rename it when the stream ended) or /dev/null: handoffd neither creates
    /// nor truncates files, and nothing it writes to can block it forever (a FIFO or a
    /// terminal could). Never follows a symbolic link.
    static func open(_ path: String) throws(StreamFailure) -> StreamFileSink {
        let fd = Glibc.open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            throw StreamFailure("write_failed", "handoffd cannot open \(path) to write the stream into: \(String(cString: strerror(errno)))")
        }
        var st = stat()
        let isNull = fstat(fd, &st) == 0 && DevNull.matches(st)
        guard isNull || ((st.st_mode & S_IFMT) == S_IFREG && st.st_size == 0) else {
            Glibc.close(fd)
            throw StreamFailure("write_failed", "handoffd writes a stream only into an empty regular file or /dev/null, and \(path) is neither")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return StreamFileSink(path: path, fd: fd)
    }

    /// Bytes on their way into the file (in the page cache, not synced: the app syncs when
    /// it keeps the file). Returns at once unless `queuedBytes` are still unwritten.
    func write(_ bytes: ByteBuffer) async throws(StreamFailure) {
        let (start, full, failed) = state.withLockedValue { s -> (Bool, Bool, StreamFailure?) in
            if let f = s.failure { return (false, false, f) }
            s.pending.append(bytes)
            s.unwritten += bytes.readableBytes
            let start = !s.writing
            s.writing = true
            return (start, !s.holds(.room), nil)
        }
        if let failed { throw failed }
        if start { NIOThreadPool.singleton.submit { _ in self.drain() } }
        guard full else { return }
        await wait(for: .room)
        if let f = state.withLockedValue({ $0.failure }) { throw f }
    }

    /// Waits until everything queued is written; the total written.
    func finish() async throws(StreamFailure) -> Int64 {
        await wait(for: .idle)
        let (failure, written) = state.withLockedValue { ($0.failure, $0.written) }
        if let failure { throw failure }
        return written
    }

    var written: Int64 { state.withLockedValue { $0.written } }
    /// Why a write failed, for the origin: the errno text, not our path.
    var failureReason: String? { state.withLockedValue { $0.reason } }

    /// Drops what is queued, waits for a write under way, closes the file.
    func close() async {
        let wake = state.withLockedValue { s in
            s.closing = true
            s.unwritten -= s.pending.reduce(0) { $0 + $1.readableBytes }
            s.pending.removeAll()
            return s.ready()
        }
        for c in wake { c.resume() }
        await wait(for: .idle)
        Glibc.close(fd)
    }

    private func wait(for condition: Condition) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLockedValue { s -> Bool in
                if s.holds(condition) { return true }
                s.waiters.append((condition, c))
                return false
            }
            if now { c.resume() }
        }
    }

    /// On the pool: writes batches until nothing is queued, or a write failed.
    private func drain() {
        while true {
            let batch = state.withLockedValue { s -> [ByteBuffer]? in
                guard !s.pending.isEmpty, !s.closing, s.failure == nil else {
                    s.writing = false
                    return nil
                }
                defer { s.pending.removeAll(keepingCapacity: true) }
                return s.pending
            }
            guard let batch else { break }
            var failure: StreamFailure?
            var reason: String?
            var done = 0
            for piece in batch {
                if let e = writeAll(piece) {
                    reason = String(cString: strerror(e))
                    failure = StreamFailure("write_failed", "writing the stream into \(path) failed: \(reason!)")
                    break
                }
                done += piece.readableBytes
            }
            let wake = state.withLockedValue { s in
                s.unwritten -= done
                s.written += Int64(done)
                if let failure {
                    s.failure = failure
                    s.reason = reason
                    s.unwritten = 0
                    s.pending.removeAll()
                }
                return s.ready()
            }
            for c in wake { c.resume() }
        }
        let wake = state.withLockedValue { $0.ready() }
        for c in wake { c.resume() }
    }

    /// The errno of a failed write, nil when all of it was written.
    private func writeAll(_ piece: ByteBuffer) -> CInt? {
        piece.withUnsafeReadableBytes { raw -> CInt? in
            do throws(WriteFailure) { try HandoffSystem.writeAll(fd, raw) } catch { return error.errno }
            return nil
        }
    }
}
