#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole small file (or standard input for "-") with a size cap: state, config and
/// `--info-json` files alike.
public enum BoundedFile {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Nil when the file does not exist.
    public static func read(_ path: String, limit: Int = 16 << 20) throws -> [UInt8]? {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { if fd != 0 { close(fd) } }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { return out }
            out += chunk[0..<n]
            if out.count > limit { throw Failure(description: "\(path) is larger than \(limit) bytes") }
        }
    }
}
