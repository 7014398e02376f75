import Foundation
import HandoffClient
import HandoffControlAPI
import HandoffCore
import HandoffTestSupport
import Testing

/// The clipboard on Wayland (a headless sway per host, its data-control protocol) and
/// between a Wayland desktop and an X11 one: wl-copy and wl-paste, xclip and the
/// python-xlib owner, as a user's apps would copy and paste.
extension WorkstationTests {
@Suite struct WaylandClipboardTests {
    static var owner: String { TestEnvironment.packageRoot + "/Tests/Fixtures/clipboard-owner" }

    func newest(_ net: NetnsRun, _ host: String) async throws -> ClipboardRecord? {
        try await HandoffClient(socketPath: net.socket(host)).clipboard()
    }

    /// a and b paired, each with a session bus and the agent on the display `start` gives it.
    func withDesktops(_ start: @escaping (DesktopSession) async throws -> Void, _ body: (NetnsRun, DesktopSession, DesktopSession) async throws -> Void) async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let a = try DesktopSession(net, host: "a"), b = try DesktopSession(net, host: "b")
            defer { a.stop(); b.stop() }
            for desk in [a, b] {
                try await desk.startBus()
                try await start(desk)
                try await desk.startAgent()
            }
            try await eventually(10, "both agents to share the clipboard") { a.log.contains("sharing the clipboard") && b.log.contains("sharing the clipboard") }
            try await body(net, a, b)
        }
    }

    func paste(_ desk: DesktopSession, _ args: String...) async throws -> CommandResult {
        try await desk.run(["timeout", "20", "wl-paste", "--no-newline"] + args)
    }

    @Test func copyOnOneSwayPasteOnAnother() async throws {
        try await withDesktops({ try await $0.startSway() }) { net, a, b in
            #expect(a.log.contains("display=Wayland"), "\(a.log)")
            // wl-copy serves in the background until something else is copied.
            #expect(try await a.run(["wl-copy", "marker from sway a"]).status == 0)
            var record: ClipboardRecord?
            try await eventually(15, "a's copy to reach b") {
                record = try await newest(net, "b")
                return record != nil
            }
            #expect(record?.local == false && record?.formats.contains { $0.type == "text/plain;charset=utf-8" } == true, "\(String(describing: record))")
            try await eventually(10, "b's agent to offer the copy") { try await b.run(["wl-paste", "--list-types"]).stdout.contains("text/plain") }
            let pasted = try await paste(b)
            #expect(pasted.status == 0 && pasted.stdout == "marker from sway a", "\(pasted)")
            // A copy on b: a pastes it, and b's stays b's (no echo back from a's agent).
            #expect(try await b.run(["wl-copy", "and back from b"]).status == 0)
            try await eventually(15, "b's copy to reach a") {
                guard let onB = try await newest(net, "b"), onB.local else { return false }
                return try await newest(net, "a")?.id == onB.id
            }
            try await eventually(10, "a's agent to offer b's copy") { try await paste(a).stdout == "and back from b" }
            try await never(within: 0.5, because: "a's agent echoed b's copy back, and it replaced b's own") { try await newest(net, "b")?.local != true }
        }
    }

    /// KDE Plasma's compositor, KWin 5.27, on a, and sway on b: wl-copy and wl-paste on
    /// each, through KWin's data-control protocol (issue 42, part 3).
    @Test func copyOnKWinPasteOnSwayAndBack() async throws {
        try await withDesktops({ desk in
            if desk.host == "a" { try await desk.startKWin() } else { try await desk.startSway() }
        }) { net, a, b in
            #expect(a.log.contains("display=Wayland"), "KWin's data-control protocol: \(a.log)")
            let sources = try await net.ctl("a", "sources").stdout
            #expect(sources.contains("sharing the Wayland clipboard"), "\(sources)")
            #expect(try await a.run(["wl-copy", "marker from KWin"]).status == 0)
            try await eventually(15, "a's copy to reach b") { try await newest(net, "b")?.local == false }
            try await eventually(10, "b's agent to offer it") { try await b.run(["wl-paste", "--list-types"]).stdout.contains("text/plain") }
            #expect(try await paste(b).stdout == "marker from KWin")
            #expect(try await b.run(["wl-copy", "back to KWin"]).status == 0)
            try await eventually(15, "b's copy to reach a") {
                guard let onB = try await newest(net, "b"), onB.local else { return false }
                return try await newest(net, "a")?.id == onB.id
            }
            try await eventually(10, "a's agent to offer it in KWin") { try await paste(a).stdout == "back to KWin" }
            try await never(within: 0.5, because: "KWin's agent echoed b's copy back, and it replaced b's own") { try await newest(net, "b")?.local != true }
        }
    }

    @Test func copyOnX11PasteOnWaylandAndBack() async throws {
        var started = 0
        try await withDesktops({ desk in
            // a: X11; b: Wayland.
            started += 1
            if desk.host == "a" { try await desk.startX() } else { try await desk.startSway() }
        }) { net, a, b in
            #expect(started == 2)
            let log = a.root + "/owner.log"
            _ = try await net.spawn("a", log: log, [Self.owner, "UTF8_STRING=@from x11", "text/html=@<i>x</i>"], environment: a.environment)
            try await eventually(15, "a's copy to reach b") { try await newest(net, "b")?.local == false }
            try await eventually(10, "b's agent to offer it") { try await b.run(["wl-paste", "--list-types"]).stdout.contains("text/html") }
            #expect(try await paste(b).stdout == "from x11")
            #expect(try await paste(b, "--type", "text/html").stdout == "<i>x</i>")
            #expect(try await b.run(["wl-copy", "from wayland"]).status == 0)
            try await eventually(15, "b's copy to reach a") {
                guard let onB = try await newest(net, "b"), onB.local else { return false }
                return try await newest(net, "a")?.id == onB.id
            }
            try await eventually(10, "a's agent to offer it") { try await a.run(["timeout", "20", "xclip", "-selection", "clipboard", "-o"]).stdout == "from wayland" }
        }
    }
}
}
