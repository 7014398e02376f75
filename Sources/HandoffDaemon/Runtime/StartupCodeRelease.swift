import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Hands the pages of code and read-only data that only start-up ran back to the kernel.
///
/// handoffd runs all session and is idle nearly all of it, but everything start-up touched
/// stays mapped and counts in its RSS: the Swift runtime's and BoringSSL's
/// initialisation, the relocation tables, the certificate and configuration code, Avahi's
/// set-up, and around each of them the neighbours the kernel maps in with every fault
/// (fault-around, 64 KiB). That is most of the 22 MB of file-backed pages a static
/// handoffd has when it is ready (Docs/Performance.md, "Idle memory"). Once it is ready,
/// `MADV_PAGEOUT` over its read-only file mappings lets the kernel reclaim them now rather
/// than under memory pressure; what handoffd runs afterwards is read back as it runs.
/// Pages another process also maps (a shared libc, for instance) are left alone by the
/// kernel. Clean pages only: nothing is written anywhere.
///
/// Since Linux 6.1 (and in the stable kernels before it) the kernel pages a file out only
/// for a process that owns the file or may write it, so a side channel cannot evict a
/// shared library's pages: a user's handoffd may page out its own build in `~/.local/bin`,
/// not `/usr/bin/handoffd`, which root owns (Debian package: 25 MiB idle instead of 14).
/// `MADV_DONTNEED` after it takes the pages out of handoffd's own page tables whoever owns
/// the file: they stay in the page cache, clean and unmapped, the first thing the kernel
/// reclaims, and what handoffd runs again is mapped back from there. Safe on these ranges
/// only because they are read-only with no private copy: nothing of handoffd's is dropped.
enum StartupCodeRelease {
    /// Linux 5.4's `MADV_PAGEOUT`; Swift's Glibc does not name it.
    static let pageOut: Int32 = 21

    /// The read-only, file-backed ranges of `/proc/self/smaps` with no private copy in
    /// them: code and constants of the executable and its libraries, as on disk. Not the
    /// writable data, and not the relocated read-only data (RELRO), whose pages are
    /// anonymous copies: paging those out would mean swap.
    static func cleanReadOnlyFileMappings(_ smaps: String) -> [(start: UInt, end: UInt)] {
        var out: [(UInt, UInt)] = []
        var candidate: (UInt, UInt)?
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains("-"), !first.hasSuffix(":") {
                // A mapping's first line: "start-end perms offset dev inode path".
                candidate = nil
                guard fields.count >= 6, fields[5].hasPrefix("/"), fields[4] != "0" else { continue }
                let perms = Array(fields[1].utf8)
                // Readable, not writable, private: a shared mapping's pages are shmem, swap to reclaim.
                guard perms.count == 4, perms[0] == UInt8(ascii: "r"), perms[1] == UInt8(ascii: "-"), perms[3] == UInt8(ascii: "p") else { continue }
                let range = first.split(separator: "-")
                guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16), end > start else { continue }
                candidate = (start, end)
            } else if first == "Anonymous:", let c = candidate {
                if fields.count >= 2, fields[1] == "0" { out.append(c) }
                candidate = nil
            }
        }
        return out
    }

    /// Returns how many bytes of mappings it advised (0 where the kernel cannot: before 5.4).
    @discardableResult
    static func release(logger: Logger) -> Int {
        guard let smaps = readProcFile("/proc/self/smaps") else { return 0 }
        var advised = 0
        for (start, end) in cleanReadOnlyFileMappings(smaps) {
            guard let address = UnsafeMutableRawPointer(bitPattern: start) else { continue }
            let paged = madvise(address, Int(end - start), pageOut) == 0
            let unmapped = madvise(address, Int(end - start), MADV_DONTNEED) == 0
            if paged || unmapped { advised += Int(end - start) }
        }
        logger.debug("start-up code handed back to the kernel", metadata: ["mapped-bytes": "\(advised)"])
        return advised
    }

    private static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buf, buf.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            out += buf[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
