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

/// Desktop entries of the `TerminalEmulator` category, between xdg-terminal-exec and
/// x-terminal-emulator: the user's own first, their `X-TerminalArgExec` or the known
/// option of their program, their own arguments kept.
struct TerminalEntryChoiceTests {
    func entry(_ id: String, _ exec: [String], argExec: String? = nil, user: Bool = false) -> TerminalLauncher.Entry {
        .init(id: id, name: id, exec: exec, argExec: argExec, isUserEntry: user)
    }

    @Test func entriesComeBetweenTheTwoAndTheUsersOwnWins() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("te-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for name in ["x-terminal-emulator", "gnome-terminal", "kitty", "xfce4-terminal", "xdg-terminal-exec"] {
            try "#!/bin/sh\n".write(toFile: "\(root)/\(name)", atomically: true, encoding: .utf8)
            chmod("\(root)/\(name)", name == "xdg-terminal-exec" ? 0o644 : 0o755)  // no xdg-terminal-exec
        }
        let system = [entry("org.gnome.Terminal.desktop", ["gnome-terminal", "--window"]), entry("kitty.desktop", ["kitty"])]
        #expect(TerminalLauncher.emulator(path: root, entries: system) == .init(path: root + "/kitty", prefix: [], name: "kitty.desktop"))
        let mine = entry("mine.desktop", ["xfce4-terminal"], user: true)
        #expect(TerminalLauncher.emulator(path: root, entries: system + [mine]) == .init(path: root + "/xfce4-terminal", prefix: ["-x"], name: "mine.desktop"))
        let declared = entry("a.desktop", ["gnome-terminal", "--window"], argExec: "--")
        #expect(TerminalLauncher.emulator(path: root, entries: [declared])?.prefix == ["--window", "--"])
        #expect(TerminalLauncher.emulator(path: root, entries: [entry("b.desktop", [root + "/kitty"], argExec: "")])?.prefix == [])
        // One whose program is not here is passed over; none at all: x-terminal-emulator.
        #expect(TerminalLauncher.emulator(path: root, entries: [entry("gone.desktop", ["alacritty"])]) == .init(path: root + "/x-terminal-emulator", prefix: ["-e"]))
        #expect(TerminalLauncher.emulator(path: root, entries: [entry("rel.desktop", ["bin/kitty"])])?.name == "x-terminal-emulator")
        #expect(TerminalLauncher.execOption(forProgram: "alacritty") == "-e")
    }
}
