import Foundation
@testable import HandoffDesktop
import Testing

/// Which terminal emulator opens a continued terminal: xdg-terminal-exec before Debian's
/// x-terminal-emulator (which needs -e), found on PATH as executables; none, nil.
struct TerminalLauncherTests {
    @Test func xdgTerminalExecFirstThenXTerminalEmulatorThenNone() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tl-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let one = root + "/one", two = root + "/two", empty = root + "/empty"
        for d in [one, two, empty] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        func executable(_ path: String, _ mode: Int = 0o755) throws {
            try "#!/bin/sh\n".write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        }
        try executable(one + "/x-terminal-emulator")
        try executable(two + "/xdg-terminal-exec")
        try executable(empty + "/xdg-terminal-exec", 0o644)  // not executable: not a terminal
        #expect(TerminalLauncher.emulator(path: empty) == nil)
        #expect(TerminalLauncher.emulator(path: "relative:" + empty) == nil)
        #expect(TerminalLauncher.emulator(path: one) == .init(path: one + "/x-terminal-emulator", prefix: ["-e"]))
        #expect(TerminalLauncher.emulator(path: "\(one):\(two)") == .init(path: two + "/xdg-terminal-exec", prefix: []))
    }
}
