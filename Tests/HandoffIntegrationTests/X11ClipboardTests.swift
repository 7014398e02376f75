import Foundation
import HandoffClient
import HandoffControlAPI
import HandoffCore
import HandoffTestSupport
import Testing

/// The clipboard between two X11 desktops (each host its own Xvfb, session bus and
/// agent): an app copies on a, an app pastes on b, and a's app is asked for its data only
/// then. Real X clients do the copying and pasting: xclip, and Tests/Fixtures/clipboard-owner,
/// which says every request it gets.
extension WorkstationTests {
@Suite struct X11ClipboardTests {
    static var owner: String { TestEnvironment.packageRoot + "/Tests/Fixtures/clipboard-owner" }

    func withDesktops(_ body: (NetnsRun, DesktopSession, DesktopSession) async throws -> Void) async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let a = try DesktopSession(net, host: "a"), b = try DesktopSession(net, host: "b")
            defer { a.stop(); b.stop() }
            for desk in [a, b] {
                try await desk.startBus()
                try await desk.startX()
                try await desk.startAgent()
            }
            try await eventually(10, "both agents to share the clipboard") { a.log.contains("sharing the clipboard") && b.log.contains("sharing the clipboard") }
            try await body(net, a, b)
        }
    }

    func newest(_ net: NetnsRun, _ host: String) async throws -> ClipboardRecord? {
        try await HandoffClient(socketPath: net.socket(host)).clipboard()
    }

    /// What the copying app was asked for, in order.
    func requests(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasPrefix("request ") }.map { String($0.dropFirst(8)) }
    }

    func xclip(_ desk: DesktopSession, _ args: String...) async throws -> CommandResult {
        try await desk.run(["timeout", "20", "xclip", "-selection", "clipboard"] + args)
    }

    @Test func copyHerePasteThereAsksTheAppOnlyOnPaste() async throws {
        try await withDesktops { net, a, b in
            let log = a.root + "/owner.log"
            _ = try await net.spawn("a", log: log, [Self.owner, "UTF8_STRING=@marker text 1", "text/html=@<b>marker</b>"], environment: a.environment)
            var record: ClipboardRecord?
            try await eventually(15, "a's copy to reach b") {
                record = try await newest(net, "b")
                return record != nil
            }
            #expect(record?.local == false && record?.formats.map(\.type) == ["text/plain;charset=utf-8", "text/html"], "\(String(describing: record))")
            #expect(requests(log) == ["TARGETS"], "a's app is asked for its formats, not its data")
            let doctor = try await net.ctl("a", "doctor")
            #expect(doctor.stdout.contains("ok       clipboard: sharing the X11 clipboard"), "\(doctor)")
            // b's agent holds b's clipboard now: its targets come from the announcement alone.
            try await eventually(10, "b's agent to offer the copy") { try await xclip(b, "-o", "-t", "TARGETS").stdout.contains("UTF8_STRING") }
            #expect(requests(log) == ["TARGETS"])

            let pasted = try await xclip(b, "-o")
            #expect(pasted.status == 0 && pasted.stdout == "marker text 1", "\(pasted)")
            #expect(requests(log) == ["TARGETS", "UTF8_STRING"])
            #expect(try await xclip(b, "-o", "-t", "text/html").stdout == "<b>marker</b>")
            #expect(requests(log) == ["TARGETS", "UTF8_STRING", "text/html"])

            // Copied again on a: once b has heard, it pastes the new copy, never the old one.
            let first = try await newest(net, "b")?.id
            let log2 = a.root + "/owner2.log"
            _ = try await net.spawn("a", log: log2, [Self.owner, "UTF8_STRING=@marker text 2"], environment: a.environment)
            try await eventually(15, "b to hear of a's second copy") { let n = try await newest(net, "b"); return n != nil && n?.id != first }
            try await eventually(10, "b to paste a's second copy") { try await xclip(b, "-o").stdout == "marker text 2" }
            #expect(requests(log).count == 3, "a's first app was asked nothing more: \(requests(log))")

            // A copy on b wins on both, and does not come back to b as a's.
            try "from b".write(toFile: b.root + "/from-b.txt", atomically: true, encoding: .utf8)
            _ = try await net.spawn("b", log: b.root + "/xclip.log", ["xclip", "-selection", "clipboard", "-quiet", "-i", b.root + "/from-b.txt"],
                                    environment: b.environment)
            try await eventually(15, "b's copy to reach a") {
                guard let onB = try await newest(net, "b"), onB.local else { return false }
                return try await newest(net, "a")?.id == onB.id
            }
            try await eventually(10, "a's agent to offer b's copy") { try await xclip(a, "-o").stdout == "from b" }
            try await never(within: 0.5, because: "a's agent echoed b's copy back, and it replaced b's own") { try await newest(net, "b")?.local != true }
            #expect(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("lost"), "a's app lost the clipboard to b's copy")
        }
    }

    /// A copy made behind a locked screen (logind's LockedHint, from a stand-in on a's
    /// system bus) is never announced; once unlocked, the next copy is.
    @Test func aCopyWhileLockedIsNeverAnnounced() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let logind = net.directory + "/a-logind.log"
            let standin = try await net.spawn("a", log: logind, [TestEnvironment.packageRoot + "/Tests/Fixtures/logind-standin"])
            func said() -> String { (try? String(contentsOfFile: logind, encoding: .utf8)) ?? "" }
            try await eventually(10, "the logind stand-in on a") { said().contains("ready") }
            let a = try DesktopSession(net, host: "a")
            defer { a.stop() }
            try await a.startBus()
            try await a.startX()
            try await a.startAgent()
            try await eventually(10, "a's agent to share the clipboard") { a.log.contains("sharing the clipboard") }

            net.stop(standin, SIGHUP)
            try await eventually(5, "the session to be locked") { said().contains("locked true") }
            let log = a.root + "/locked.log"
            _ = try await net.spawn("a", log: log, [Self.owner, "UTF8_STRING=@typed behind the lock"], environment: a.environment)
            try await eventually(10, "a's agent to see the copy") { a.log.contains("while the session is locked is not announced") }
            #expect(try await newest(net, "a") == nil)
            #expect(try await newest(net, "b") == nil)

            net.stop(standin, SIGHUP)
            try await eventually(5, "the session to be unlocked") { said().contains("locked false") }
            _ = try await net.spawn("a", log: a.root + "/unlocked.log", [Self.owner, "UTF8_STRING=@typed by the user"], environment: a.environment)
            try await eventually(15, "the copy made unlocked to reach b") { try await newest(net, "b")?.local == false }
        }
    }

    /// `clipboard-exclude-apps`: a copy by an app named there (by its window's WM_CLASS, or
    /// its client leader's) is never announced; another app's copy is. Read again at each
    /// copy, so no restart.
    @Test func aCopyByAnExcludedAppIsNeverAnnounced() async throws {
        try await withDesktops { net, a, b in
            try "clipboard-exclude-apps = KeePassXC; org.example.Vault\n".write(toFile: a.configHome + "/handoff/handoff-session.conf", atomically: true, encoding: .utf8)
            let vault = a.root + "/vault.log"
            _ = try await net.spawn("a", log: vault, [Self.owner, "--wm-class", "keepassxc", "UTF8_STRING=@hunter2"], environment: a.environment)
            try await eventually(10, "the excluded app's copy to be seen") { a.log.contains("excluded in clipboard-exclude-apps") }
            #expect(a.log.contains("keepassxc"), "\(a.log)")
            #expect(try await newest(net, "b") == nil)
            #expect(try await newest(net, "a") == nil)
            // Named on its client leader only, as toolkits do.
            _ = try await net.spawn("a", log: a.root + "/leader.log", [Self.owner, "--leader-class", "org.example.Vault", "UTF8_STRING=@hunter3"],
                                    environment: a.environment)
            try await eventually(10, "the second excluded copy to be seen") {
                a.log.components(separatedBy: "excluded in clipboard-exclude-apps").count > 2
            }
            #expect(try await newest(net, "b") == nil)
            // Another app's copy is announced.
            _ = try await net.spawn("a", log: a.root + "/editor.log", [Self.owner, "--wm-class", "org.example.Editor", "UTF8_STRING=@shared"],
                                    environment: a.environment)
            try await eventually(15, "the editor's copy to reach b") { try await newest(net, "b") != nil }
            #expect(requests(vault) == ["TARGETS"], "the excluded app was asked for its data")
        }
    }

    @Test func aSecretCopyIsNeverAnnouncedAndLargeDataArrivesWhole() async throws {
        try await withDesktops { net, a, b in
            let log = a.root + "/secret.log"
            _ = try await net.spawn("a", log: log, [Self.owner, "UTF8_STRING=@hunter2", "x-kde-passwordManagerHint=@secret"], environment: a.environment)
            try await eventually(10, "the password manager's copy to be seen") { a.log.contains("marked secret") }
            #expect(try await newest(net, "b") == nil)
            #expect(try await newest(net, "a") == nil)
            #expect(requests(log) == ["TARGETS"])

            // 50 MiB of text and 3 MiB of "image", both in INCR pieces on each side.
            let text = a.root + "/big.txt", image = a.root + "/image.png"
            _ = try await net.exec("a", ["/bin/sh", "-c", "head -c 39321600 /dev/urandom | base64 -w 76 > \(text); head -c 3145728 /dev/urandom > \(image)"])
            for (type, file) in [("UTF8_STRING", text), ("image/png", image)] {
                let before = try await newest(net, "b")?.id
                _ = try await net.spawn("a", log: a.root + "/xclip-\(type.replacingOccurrences(of: "/", with: "-")).log",
                                        ["xclip", "-selection", "clipboard", "-quiet", "-t", type, "-i", file], environment: a.environment)
                try await eventually(15, "the \(type) copy to reach b") { let n = try await newest(net, "b"); return n != nil && n?.id != before }
                let out = b.root + "/pasted-\(type.replacingOccurrences(of: "/", with: "-"))"
                let wanted = type == "UTF8_STRING" ? "UTF8_STRING" : type
                try await eventually(10, "b's agent to offer it") { try await xclip(b, "-o", "-t", "TARGETS").stdout.contains(wanted) }
                let r = try await b.run(["/bin/sh", "-c", "timeout 60 xclip -selection clipboard -o -t \(wanted) > \(out)"])
                #expect(r.status == 0, "\(r)")
                let sums = try await net.exec("a", ["sha256sum", file, out])
                let hashes = sums.stdout.split(separator: "\n").map { $0.split(separator: " ").first ?? "" }
                #expect(hashes.count == 2 && hashes[0] == hashes[1], "\(type): \(sums)")
            }
        }
    }
}
}
