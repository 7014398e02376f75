import HandoffSystem
#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered output: each line is written at once, so `--attach` prints its id before
/// it starts waiting, and pipes see lines as they happen.
enum Output {
    static func out(_ line: String) { write(1, line + "\n") }
    static func err(_ line: String) { write(2, line + "\n") }

    /// A reader that went away loses the rest: nothing to tell it.
    private static func write(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { try? writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    static var stdoutIsTerminal: Bool { isatty(1) == 1 }
}
