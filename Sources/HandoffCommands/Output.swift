#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered output: each line is written at once, so `--attach` prints its id before
/// it starts waiting, and pipes see lines as they happen.
enum Output {
    static func out(_ line: String) { write(1, line + "\n") }
    static func err(_ line: String) { write(2, line + "\n") }

    private static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 { if errno == EINTR { continue }; return }
            off += n
        }
    }

    static var stdoutIsTerminal: Bool { isatty(1) == 1 }
}
