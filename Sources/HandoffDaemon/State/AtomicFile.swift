#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HandoffCore
import HandoffSystem
import NIOConcurrencyHelpers

/// Small files written so that a crash at any moment leaves either the old or the new
/// content: write a temporary file beside it, fsync, rename over. `write` does it all in
/// place (start-up); `StateWriter` does the flushing half off the event loop.
enum AtomicFile {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) throws {
        try commit(try prepare(bytes, to: path, mode: mode, keepingOpen: true))
    }

    /// A new content written beside its file, not yet flushed nor in place.
    struct Pending: Sendable {
        let temporary: String
        let path: String
        /// What the temporary file holds, to write it again if its flush fails.
        let bytes: [UInt8]
        let mode: mode_t
        /// Still open for the flush, when `commit` follows at once (`keepingOpen`): the file
        /// is not opened a second time.
        var descriptor: Int32? = nil
    }

    private static let sequence = NIOLockedValueBox<UInt64>(0)

    /// The first half of `write`: the new content in a temporary file of its own beside
    /// `path` (so a full disk fails here, before anything changes). `makingDirectory`:
    /// creates `path`'s directory first if it is missing.
    /// `keepingOpen`: the caller commits at once, so the descriptor stays open for it.
    static func prepare(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600, makingDirectory: Bool = false, keepingOpen: Bool = false) throws -> Pending {
        let n = sequence.withLockedValue { n -> UInt64 in n += 1; return n }
        let tmp = path + ".tmp-\(getpid())-\(n)"
        var fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        if fd < 0, errno == ENOENT, makingDirectory, let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try makeDirectories(String(path[..<slash]))
            fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        }
        guard fd >= 0 else { throw Failure(description: "cannot create \(tmp): \(errnoText())") }
        var failure: String?
        bytes.withUnsafeBytes { buf in
            do throws(WriteFailure) { try writeAll(fd, buf) } catch { failure = error.reason }
        }
        if failure != nil || !keepingOpen {
            if close(fd) != 0 && failure == nil { failure = errnoText() }
        }
        if let failure { unlink(tmp); throw Failure(description: "cannot write \(tmp): \(failure)") }
        return Pending(temporary: tmp, path: path, bytes: bytes, mode: mode, descriptor: keepingOpen ? fd : nil)
    }

    /// The second half: flush the new content, put it in place, flush the directory. Only
    /// after the rename is the new content what a restart reads; only after the fsyncs is
    /// it what a power cut leaves.
    static func commit(_ p: Pending) throws {
        _ = try commit(p, claiming: { true })
    }

    /// `commit`, put in place only if `claim` (asked once the content is flushed, or its
    /// flush failed) says the change stands; false: removed, the file as it was, and false.
    static func commit(_ p: Pending, claiming claim: () -> Bool) throws -> Bool {
        let fd = p.descriptor ?? open(p.temporary, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: "cannot open \(p.temporary): \(errnoText())") }
        var synced = fsync(fd) == 0
        var err = errnoText()
        // A write the kernel took may fail only now, at close (NFS reports it here).
        if close(fd) != 0, synced, p.descriptor != nil { (synced, err) = (false, errnoText()) }
        guard claim() else {
            unlink(p.temporary)
            return false
        }
        guard synced else { unlink(p.temporary); throw Failure(description: "cannot write \(p.temporary): \(err)") }
        guard rename(p.temporary, p.path) == 0 else {
            let e = errnoText()
            unlink(p.temporary)
            throw Failure(description: "cannot rename \(p.temporary) to \(p.path): \(e)")
        }
        // The rename itself lives in the directory: sync it too, or a power cut may undo it.
        let dir = String(p.path[..<(p.path.lastIndex(of: "/") ?? p.path.startIndex)])
        let dfd = open(dir.isEmpty ? "." : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
        return true
    }

    /// Removes the temporary files a daemon that died mid-write left in `directory`:
    /// `NAME.tmp-PID` or `NAME.tmp-PID-N` where `isStateFile(NAME)` and PID is no longer
    /// running. Returns their names. A live process's, and anything else, are left alone.
    @discardableResult
    static func removeStaleTemporaries(in directory: String, isStateFile: (Substring) -> Bool) -> [String] {
        var removed: [String] = []
        for name in names(in: directory) {
            let parts = name.split(separator: ".tmp-", omittingEmptySubsequences: false)
            guard parts.count == 2, isStateFile(parts[0]) else { continue }
            let numbers = parts[1].split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(numbers.count), numbers.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
                  let pid = Int32(numbers[0]), pid > 0 else { continue }
            if kill(pid, 0) == 0 || errno == EPERM { continue }
            if unlink(directory + "/" + name) == 0 { removed.append(name) }
        }
        return removed
    }

    /// Nil when the file does not exist.
    static func read(_ path: String, limit: Int = 16 << 20) throws -> [UInt8]? {
        try BoundedFile.read(path, limit: limit)
    }

    /// Renames a file handoffd could not read out of the way (kept for the user, never
    /// overwritten by the next save) and returns its new path: `PATH.unreadable-SECONDS`,
    /// or `PATH.unreadable` when `stamped` is false. `handoffctl doctor` lists such files.
    @discardableResult
    static func keepAside(_ path: String, stamped: Bool = true) -> String {
        let aside = path + ".unreadable" + (stamped ? "-\(SystemClock.now().seconds)" : "")
        _ = rename(path, aside)
        return aside
    }

    /// The names in a directory (not `.` and `..`); empty if it cannot be read.
    static func names(in directory: String) -> [String] {
        guard let d = opendir(directory) else { return [] }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafePointer(to: e.pointee.d_name) { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    /// `mkdir -p` with `mode` for the directories it creates.
    static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, mode) != 0 && errno != EEXIST {
                throw Failure(description: "cannot create directory \(current): \(errnoText())")
            }
        }
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}
