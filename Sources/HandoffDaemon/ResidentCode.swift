import Dispatch
import Logging
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the code a request has run in memory, so the first `continue` after a long idle
/// does not read it back from the disk.
///
/// The kernel takes an idle process's clean code pages back whenever it wants the memory:
/// under pressure on a busy desktop, and on some machines proactively (this project's test
/// machines run DAMON's page-out scheme, which took the first `continue` after ten idle
/// minutes from 14 ms to 1.1–3.1 s; Docs/Performance.md). After the start-up release
/// (`StartupCodeRelease`) the pages still mapped into handoffd's own page tables are the
/// ones it ran since: the request path (the warm-up), and later a continue's and a
/// fetch's. Those, and only those, are locked (`mlock`), in runs of mapped pages read
/// from `/proc/self/pagemap`, within `RLIMIT_MEMLOCK` (8 MiB for a user by default) and
/// a cap of its own. A lock that fails (no budget) changes nothing but how soon a page is
/// resident again; nothing else depends on it.
final class ResidentCode: Sendable {
    /// At most this much code stays locked, whatever the limit.
    static let capBytes = 12 << 20
    /// After a use, wait this long (the request's pages are mapped by then), and lock at
    /// most once per `minimumInterval`.
    static let settleDelay = DispatchTimeInterval.seconds(2)
    static let minimumInterval: Int64 = 60  // seconds

    /// One per process: the pages are the process's.
    static let shared = ResidentCode()

    /// Set once the start-up code was released (before, everything start-up ran is still
    /// mapped, and locking it would keep what the release is for).
    private let logger = NIOLockedValueBox<Logger?>(nil)
    private let state = NIOLockedValueBox((scheduled: false, lastRun: Int64.min))
    private let queue = DispatchQueue(label: "handoff.resident-code", qos: .utility)

    func enable(logger: Logger) {
        self.logger.withLockedValue { $0 = logger }
        noteUse()
    }

    /// A request path ran (a continue, a fetch served, the warm-up): lock its pages soon.
    func noteUse() {
        guard let logger = logger.withLockedValue({ $0 }) else { return }
        let now = Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000_000)
        let schedule = state.withLockedValue { s -> Bool in
            guard !s.scheduled, s.lastRun == .min || now - s.lastRun >= Self.minimumInterval else { return false }
            s.scheduled = true
            return true
        }
        guard schedule else { return }
        queue.asyncAfter(deadline: .now() + Self.settleDelay) { [self] in
            _ = self
            let locked = Self.lockMappedCode()
            state.withLockedValue { s in
                s.scheduled = false
                s.lastRun = Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000_000)
            }
            logger.debug("request code kept resident", metadata: ["locked-bytes": "\(locked.total)", "runs": "\(locked.runs)",
                                                                   "left-out-bytes": "\(locked.leftOut)"])
        }
    }

    /// Locks the runs of mapped pages in the clean read-only file mappings (the same ranges
    /// the start-up release advises), nearest gaps of up to 16 pages (64 KiB: the kernel's
    /// fault-around) joined. Returns what is locked in all, the runs, and what did not fit.
    static func lockMappedCode() -> (total: Int, runs: Int, leftOut: Int) {
        guard let smaps = StartupCodeRelease.readProcFile("/proc/self/smaps") else { return (0, 0, 0) }
        let pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
        guard pagemap >= 0 else { return (0, 0, 0) }
        defer { close(pagemap) }
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        var limit = rlimit()
        let memlock: __rlimit_resource_t = 8  // RLIMIT_MEMLOCK (Linux), which the Glibc module leaves out
        guard getrlimit(memlock, &limit) == 0 else { return (0, 0, 0) }
        let budget = Int(min(UInt64(capBytes), UInt64(limit.rlim_cur)))
        var runs: [(UInt, UInt)] = []
        for (start, end) in StartupCodeRelease.cleanReadOnlyFileMappings(smaps) {
            runs += mappedRuns(pagemap: pagemap, start: start, end: end, page: page, joinGap: 16)
        }
        // mlock counts what is locked already; relocking a run costs nothing more.
        var total = 0
        var leftOut = 0
        var count = 0
        for (start, end) in runs {
            let length = Int(end - start)
            guard total + length <= budget, let address = UnsafeRawPointer(bitPattern: start) else {
                leftOut += length
                continue
            }
            if mlock(address, length) == 0 {
                total += length
                count += 1
            } else {
                leftOut += length
            }
        }
        return (total, count, leftOut)
    }

    /// The runs of pages in [start, end) that are in this process's page tables (pagemap's
    /// bit 63), runs closer than `joinGap` pages joined into one.
    static func mappedRuns(pagemap: CInt, start: UInt, end: UInt, page: UInt, joinGap: UInt) -> [(UInt, UInt)] {
        let pages = Int((end - start) / page)
        guard pages > 0 else { return [] }
        var entries = [UInt64](repeating: 0, count: pages)
        let wanted = pages * 8
        let read = entries.withUnsafeMutableBytes { pread(pagemap, $0.baseAddress, wanted, off_t((start / page) * 8)) }
        guard read == wanted else { return [] }
        var runs: [(UInt, UInt)] = []
        for (i, entry) in entries.enumerated() where entry & (1 << 63) != 0 {
            let address = start + UInt(i) * page
            if let last = runs.last, address - last.1 <= joinGap * page {
                runs[runs.count - 1].1 = address + page
            } else {
                runs.append((address, address + page))
            }
        }
        return runs
    }
}
