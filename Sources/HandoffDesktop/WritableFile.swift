import HandoffSystem
#if canImport(Glibc)
import Glibc
#endif

/// A file written front to back with plain POSIX calls and flushed to disk before it is
/// closed (Foundation's FileHandle would bring all of Foundation, ICU included).
public final class WritableFile {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private var fd: Int32
    public let path: String

    /// Creates `path` (it must not exist) with `mode`.
    public init(creating path: String, mode: mode_t = 0o600) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        self.path = path
        guard fd >= 0 else { throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    public func write(_ bytes: [UInt8]) throws {
        do { try bytes.withUnsafeBytes { try writeAll(fd, $0) } } catch let e as WriteFailure {
            throw Failure(description: "cannot write \(path): \(e.reason)")
        }
    }

    /// Flushes to disk and closes; a failure of either is reported (a full disk shows here).
    public func close() throws {
        guard fd >= 0 else { return }
        let synced = fsync(fd) == 0 ? 0 : errno
        let closed = Glibc.close(fd) == 0 ? 0 : errno
        fd = -1
        if synced != 0 || closed != 0 {
            throw Failure(description: "cannot save \(path): \(String(cString: strerror(synced != 0 ? synced : closed)))")
        }
    }
}
