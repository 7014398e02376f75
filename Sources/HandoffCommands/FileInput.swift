#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole file, or standard input for `-`, with a size cap.
enum FileInput {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func read(_ source: String, limit: Int = 16 << 20) throws -> [UInt8] {
        let fd = source == "-" ? 0 : open(source, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: "cannot open \(source): \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw Failure(description: "cannot read \(source): \(String(cString: strerror(errno)))") }
            if n == 0 { return out }
            out += buf[0..<n]
            if out.count > limit { throw Failure(description: "\(source) is larger than \(limit) bytes") }
        }
    }
}
