import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

/// Continuing opens the right app on the continuing workstation, through the session
/// agent and GIO: a handler declared in a desktop entry gets the full payload through the
/// local API, web pages go to the app claiming their domain or to the default browser,
/// and what cannot be opened says so. Real parts: two namespace workstations, a session
/// D-Bus, desktop entries, handoff-session, and dunst for notifications. Root only.
extension WorkstationTests {
@Suite struct ContinueOpensAppsTests {
    func json(_ text: String) throws -> [String: Any] {
        guard let o = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { throw TestFailure("not JSON: \(text)") }
        return o
    }

    func canonical(_ v: Any?) throws -> String {
        guard let v else { return "nil" }
        return String(decoding: try JSONSerialization.data(withJSONObject: v, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Two paired workstations; B has a desktop session with the usual entries.
    func withDesktop(notifications: Bool = false, _ body: (NetnsRun, DesktopSession) async throws -> Void) async throws {
        try await NetnsRun.withPairedDesktop { net, desk in
            try desk.addEntry("org.example.Editor.desktop", name: "Editor", lines: [
                "Icon=accessories-text-editor", "MimeType=text/plain;",
                "X-Handoff-ActivityTypes=org.example.editor.edit-note;org.example.editor.draft;",
            ], recordAs: "editor")
            try desk.addEntry("org.example.Reader.desktop", name: "Reader", lines: [
                "X-Handoff-Domains=news.example.org;*.docs.example.org;",
            ], recordAs: "reader")
            try desk.addEntry("test-browser.desktop", name: "Test Browser", lines: [
                "MimeType=x-scheme-handler/http;x-scheme-handler/https;",
            ], recordAs: "browser")
            try desk.setDefaultBrowser("test-browser.desktop")
            try await desk.startBus()
            if notifications { try await desk.startNotificationServer() }
            try await desk.startAgent(notifications ? [] : ["--no-notifications"], environment: ["HANDOFF_RECORD_STREAM": "1"])
            do {
                try await body(net, desk)
            } catch {
                throw TestFailure("\(error)\n--- agent log ---\n\(desk.log.split(separator: "\n").suffix(30).joined(separator: "\n"))")
            }
        }
    }

    @discardableResult
    func offer(_ net: NetnsRun, _ args: [String], stdin: String? = nil) async throws -> String {
        try await net.offer(from: "a", to: "b", args, stdin: stdin)
    }

    @Test func handlerGetsTheFullPayloadAndOpensAStream() async throws {
        try await withDesktop { net, desk in
            let source = net.directory + "/note-body.bin"
            _ = try await net.exec("a", ["/bin/sh", "-c", "head -c 3000000 /dev/urandom > \(source)"])
            // Every value type, through the payload and back.
            let info = #"{"s":"Grüße \"quoted\"","i":-42,"d":1.5,"b":true,"data":{"$data":"AAEC/w=="},"date":{"$date":"2026-11-21T10:00:00.123456789Z"},"url":{"$url":"https://example.org/x?y=1"},"list":[1,"two",[3]],"dict":{"k":{"n":null}},"set":{"$set":["a","b"]},"nothing":null}"#
            let activityID = try await offer(net, ["--type", "org.example.editor.edit-note", "--title", "Shopping list",
                                                   "--info-json", "-", "--stream-file", source], stdin: info)
            // Offered, seen on b, and nothing opens there until the user continues
            // (Security.md 3.5).
            try await never(within: 2, because: "an app opened on b without the user continuing") { try desk.record("editor") != nil }
            let r = try await net.ctl("b", "continue")
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("continued \"Shopping list\" from ws-a: opened in Editor (org.example.Editor.desktop)"), "\(r)")
            let record = try await desk.waitForRecord("editor")
            #expect(record["argv"] as? [String] == ["handoff:continued/\(activityID)"], "\(record)")
            let env = record["env"] as? [String: String] ?? [:]
            #expect(env["HANDOFF_ACTIVITY_ID"] == activityID)
            #expect(env["HANDOFF_ACTIVITY_TYPE"] == "org.example.editor.edit-note")
            #expect(env["HANDOFF_DEVICE"] == "ws-a")
            #expect(record["status"] as? Int == 200, "\(record)")
            // The payload the app fetched is the origin's, value for value.
            let origin = try json(try await net.ctl("a", "current", "--json").stdout)
            let payload = record["payload"] as? [String: Any] ?? [:]
            #expect(try canonical(payload["userInfo"]) == (try canonical(origin["userInfo"])))
            #expect(try canonical(payload["userInfo"]).contains("2026-11-21T10:00:00.123456789Z"))
            #expect((payload["device"] as? [String: Any])?["name"] as? String == "ws-a")
            // And it opened a continuation stream to the origin: the file arrived whole.
            let stream = record["stream"] as? [String: Any] ?? [:]
            let hash = try await net.exec("a", ["sha256sum", source]).stdout.split(separator: " ").first.map(String.init)
            #expect(stream["bytes"] as? Int == 3_000_000, "\(stream)")
            #expect(stream["sha256"] as? String == hash, "\(stream)")
        }
    }

    /// The history as a user meets it: b finds what a offered (only what its app let be
    /// searched, and of userInfo only the opted-in keys), reopens its page from the list,
    /// keeps it across a restart, and forgets it on request.
    @Test func historyFindsWhatAPeerOfferedAndReopensItsPage() async throws {
        try await withDesktop { net, desk in
            _ = try await offer(net, ["--type", "org.example.unknown.report", "--title", "Quarterly report", "--search",
                                      "--keywords", "finance", "--info", "client=Acme", "--info", "note=zebra",
                                      "--searchable-keys", "client", "--webpage-url", "https://example.com/reports/q3"])
            _ = try await offer(net, ["--type", "org.example.unknown.private", "--title", "Secret plan"])
            try await eventually(10, "b's history to have a's report") {
                try await net.ctl("b", "history", "acme").stdout.contains("Quarterly report")
            }
            let found = try await net.ctl("b", "--json", "history", "fin")
            let entries = try #require(try json(found.stdout)["entries"] as? [[String: Any]], "\(found)")
            #expect(entries.count == 1 && (entries[0]["device"] as? [String: Any])?["name"] as? String == "ws-a", "\(found)")
            #expect(entries[0]["local"] as? Bool == false)
            #expect(try await net.ctl("b", "history", "secret").stdout.contains("nothing matches"), "not eligible for search")
            #expect(try await net.ctl("b", "history", "zebra").stdout.contains("nothing matches"), "userInfo not opted in")
            #expect(try await net.ctl("a", "history", "quarterly").stdout.contains("here"), "a's own offers are in a's history")
            #expect(try await net.ctl("b", "history", "--device", "ws-a", "report").stdout.contains("Quarterly report"))
            #expect(try await net.ctl("b", "history", "--device", "ws-c", "report").stdout.contains("nothing matches"))

            // Reopen it from the list: the page opens in the browser.
            let id = try #require(entries[0]["id"] as? Int)
            let reopened = try await net.ctl("b", "history", "--open", String(id))
            #expect(reopened.status == 0 && reopened.stdout.contains("in Test Browser"), "\(reopened)")
            #expect(try await desk.waitForRecord("browser")["argv"] as? [String] == ["https://example.com/reports/q3"])

            // It outlives a restart of handoffd, and goes when asked.
            await net.kill("b", SIGTERM)
            try await net.startDaemon("b")
            #expect(try await net.ctl("b", "history", "acme").stdout.contains("Quarterly report"))
            let cleared = try await net.ctl("b", "history", "--clear")
            #expect(cleared.status == 0 && cleared.stdout.contains("forgot 1 entry"), "\(cleared)")
            #expect(try await net.ctl("b", "history").stdout.contains("the history is empty"))
        }
    }

    @Test func webPagesGoToTheClaimingAppElseTheBrowser() async throws {
        try await withDesktop { net, desk in
            // No app for the type: the page opens in the default browser (mimeapps.list).
            _ = try await offer(net, ["--type", "org.example.unknown.thing", "--title", "Page", "--webpage-url", "https://example.com/a?b=c"])
            let web = try await net.ctl("b", "continue")
            #expect(web.status == 0, "\(web)")
            #expect(web.stdout.contains("opened https://example.com/a?b=c in Test Browser (test-browser.desktop)"), "\(web)")
            #expect(try await desk.waitForRecord("browser")["argv"] as? [String] == ["https://example.com/a?b=c"])
            // A browsing-web activity on a domain an app claims goes to that app, not the browser.
            _ = try await offer(net, ["--type", "handoff.browsing-web", "--title", "Story", "--webpage-url", "https://news.example.org/story/1"])
            let claimed = try await net.ctl("b", "continue")
            #expect(claimed.status == 0, "\(claimed)")
            #expect(claimed.stdout.contains("in Reader (org.example.Reader.desktop), which claims that site"), "\(claimed)")
            #expect(try await desk.waitForRecord("reader")["argv"] as? [String] == ["https://news.example.org/story/1"])
            // *.docs.example.org covers the domain and its subdomains; a look-alike is not covered.
            _ = try await offer(net, ["--type", "handoff.browsing-web", "--title", "Docs", "--webpage-url", "https://a.b.docs.example.org/x"])
            #expect(try await net.ctl("b", "continue").stdout.contains("in Reader"))
            _ = try await offer(net, ["--type", "handoff.browsing-web", "--title", "Evil", "--webpage-url", "https://news.example.org.evil.test/x"])
            #expect(try await net.ctl("b", "continue").stdout.contains("in Test Browser"))
            // An entry installed while the agent runs is found at once.
            _ = try await offer(net, ["--type", "org.example.late.arrival", "--title", "Late"])
            let before = try await net.ctl("b", "continue")
            #expect(before.status == 1 && before.stderr.contains("nothing here opens org.example.late.arrival activities"), "\(before)")
            try desk.addEntry("org.example.Late.desktop", name: "Late", lines: ["X-Handoff-ActivityTypes=org.example.late.arrival;"], recordAs: "late")
            try await eventually(10, "the new entry to be used") {
                try await net.ctl("b", "continue").stdout.contains("opened in Late (org.example.Late.desktop)")
            }
            _ = try await desk.waitForRecord("late")
            // The user's override beats the declaring app.
            try "handler.org.example.late.arrival = org.example.Editor.desktop\n".write(
                toFile: desk.configHome + "/handoff/handoff-session.conf", atomically: true, encoding: .utf8)
            #expect(try await net.ctl("b", "continue").stdout.contains("opened in Editor"))
        }
    }

    @Test func whatCannotBeOpenedSaysWhyAndFails() async throws {
        try await withDesktop { net, desk in
            // No handler and no web page: a clear message and exit 1, the payload still printed.
            _ = try await offer(net, ["--type", "org.example.nobody.handles", "--title", "Orphan", "--info", "k=v"])
            let none = try await net.ctl("b", "continue")
            #expect(none.status == 1, "\(none)")
            #expect(none.stderr.contains("opened nothing: nothing here opens org.example.nobody.handles activities and the activity has no web page"), "\(none)")
            #expect(none.stdout.contains("k = \"v\""), "\(none)")
            let open = try await net.ctl("b", "continue", "--open")
            #expect(open.status == 1, "\(open)")
            // --print opens nothing and succeeds.
            let printed = try await net.ctl("b", "continue", "--print")
            #expect(printed.status == 0 && printed.stdout.contains("org.example.nobody.handles"), "\(printed)")
            // A handler that cannot start (here: its interpreter is missing, so it dies at
            // once): said, exit 1. (GIO does not even list an entry whose Exec is missing.)
            let brokenApp = desk.root + "/broken-app"
            try "#!/nonexistent/interpreter\n".write(toFile: brokenApp, atomically: true, encoding: .utf8)
            chmod(brokenApp, 0o755)
            try desk.addEntry("org.example.Broken.desktop", name: "Broken", lines: ["X-Handoff-ActivityTypes=org.example.broken.app;"],
                              exec: "\(brokenApp) %u")
            // A malformed entry, and a hostile one: ignored or set aside, never a crash.
            try Data([0x5B, 0xFF, 0x00, 0x0A] + Array("Exec=rm -rf /\n".utf8)).write(to: URL(fileURLWithPath: desk.applications + "/bad.desktop"))
            try desk.addEntry("org.example.Hostile.desktop", name: "Hostile", lines: [
                "X-Handoff-ActivityTypes=../../etc/passwd;<script>;" + String(repeating: "a.", count: 20000) + "b;org.example.hostile.ok;",
                "X-Handoff-Domains=*;*.;..;exa mple.org;" + String(repeating: "x", count: 300) + ".org;",
            ], recordAs: "hostile")
            _ = try await offer(net, ["--type", "org.example.broken.app", "--title", "Broken"])
            try await eventually(10, "the broken entry to be seen") {
                let r = try await net.ctl("b", "continue")
                return r.stderr.contains("org.example.Broken.desktop could not be started") || r.stderr.contains("org.example.Broken.desktop started but exited at once")
            }
            let broken = try await net.ctl("b", "continue")
            #expect(broken.status == 1, "\(broken)")
            // One that starts and dies at once is no app opened either.
            let crashy = desk.root + "/crashy-app"
            try "#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n".write(toFile: crashy, atomically: true, encoding: .utf8)
            chmod(crashy, 0o755)
            try desk.addEntry("org.example.Crashy.desktop", name: "Crashy", lines: ["X-Handoff-ActivityTypes=org.example.crashy.app;"], exec: "\(crashy) %u")
            _ = try await offer(net, ["--type", "org.example.crashy.app", "--title", "Crashy"])
            try await eventually(10, "the crashy app's failure to be reported") {
                let r = try await net.ctl("b", "continue")
                return r.status == 1 && r.stderr.contains("org.example.Crashy.desktop started but exited at once with status 3")
            }
            _ = try await offer(net, ["--type", "org.example.hostile.ok", "--title", "Fine"])
            #expect(try await net.ctl("b", "continue").stdout.contains("opened in Hostile"))
            #expect(desk.log.contains("X-Handoff-ActivityTypes has entries that are no activity types"), "\(desk.log)")
            #expect(desk.log.contains("X-Handoff-Domains has entries that are no domain names"))
            // The agent survived all of it and still answers.
            #expect(try await net.ctl("b", "status", "--json").stdout.contains("\"launcher\": true"))
            // Without the agent, a plain continue prints (headless); --open fails and says why.
            await desk.stopAgent()
            try await eventually(10, "the launcher role to be vacant") {
                try await net.ctl("b", "status", "--json").stdout.contains("\"launcher\": false")
            }
            let headless = try await net.ctl("b", "continue")
            #expect(headless.status == 0 && headless.stdout.contains("org.example.hostile.ok"), "\(headless)")
            let insist = try await net.ctl("b", "continue", "--open")
            #expect(insist.status == 1 && insist.stderr.contains("no session agent is running"), "\(insist)")
        }
    }

    @Test func shippedAndTestEntriesAreValid() async throws {
        try await withDesktop { net, desk in
            let entries = try FileManager.default.contentsOfDirectory(atPath: desk.applications).map { desk.applications + "/" + $0 }
                + [TestEnvironment.packageRoot + "/Docs/examples/notes/org.example.HandoffNotes.desktop"]
            for e in entries {
                let r = try await net.exec("b", ["desktop-file-validate", e])
                #expect(r.status == 0 && r.stdout.isEmpty, "\(e): \(r)")
            }
        }
    }

    @Test func exampleNotesAppContinuesANote() async throws {
        try await withDesktop { net, desk in
            // The shipped entry as it is, the example on the agent's PATH.
            let example = TestEnvironment.packageRoot + "/Docs/examples/notes"
            try FileManager.default.copyItem(atPath: example + "/org.example.HandoffNotes.desktop",
                                             toPath: desk.applications + "/org.example.HandoffNotes.desktop")
            await desk.stopAgent()
            try await desk.startAgent(["--no-notifications"], environment: [
                "PATH": example + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"), "HANDOFF_NOTES_NO_OPEN": "1"])
            let note = net.directory + "/list.txt"
            let text = (1...2000).map { "item \($0)" }.joined(separator: "\n")
            try text.write(toFile: note, atomically: true, encoding: .utf8)
            var env = net.environment
            env["HANDOFF_SOCKET"] = net.socket("a")
            let wrote = try await net.exec("a", ["env", "HANDOFF_SOCKET=\(net.socket("a"))", example + "/handoff-notes", "write", "Shopping list", note])
            #expect(wrote.status == 0 && wrote.stdout.contains("offering \"Shopping list\""), "\(wrote)")
            try await eventually(10, "the note's offer at b") { try await net.ctl("b", "list").stdout.contains("Shopping list") }
            let r = try await net.ctl("b", "continue")
            #expect(r.status == 0 && r.stdout.contains("opened in Handoff Notes (example)"), "\(r)")
            // The whole note (over 2,000 characters: it came through the stream) is in ~/Notes.
            let saved = desk.root + "/Notes/Shopping list.txt"
            try await eventually(15, "the note to be saved on b") { FileManager.default.fileExists(atPath: saved) }
            try await eventually(5, "the note to be whole") { (try? String(contentsOfFile: saved, encoding: .utf8)) == text }
        }
    }

    @Test func availableActivityIsNotifiedAndItsActionContinues() async throws {
        try await withDesktop(notifications: true) { net, desk in
            let monitorLog = desk.root + "/monitor.log"
            let monitor = try await net.spawn("b", log: monitorLog, ["dbus-monitor", "--address", desk.busAddress,
                                                                      "interface='org.freedesktop.Notifications',member='Notify'"])
            defer { net.stop(monitor, SIGTERM) }
            // dbus-monitor gives up its name once it monitors: from then on it sees every Notify.
            try await eventually(10, "dbus-monitor to monitor") {
                ((try? String(contentsOfFile: monitorLog, encoding: .utf8)) ?? "").contains("member=NameLost")
            }
            _ = try await offer(net, ["--type", "org.example.editor.edit-note", "--title", "Grocery run"])
            try await eventually(10, "a notification for the offer") {
                let calls = (try? String(contentsOfFile: monitorLog, encoding: .utf8)) ?? ""
                return calls.contains("Continue \u{201C}Grocery run\u{201D}") && calls.contains("from ws-a")
            }
            let calls = try String(contentsOfFile: monitorLog, encoding: .utf8)
            #expect(calls.contains("accessories-text-editor"), "the handler's icon: \(calls)")
            #expect(calls.contains("\"default\"") && calls.contains("\"Continue\""), "\(calls)")
            let shown = try await desk.run(["dunstctl", "count", "displayed"])
            #expect(shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(shown)")
            // Updates of the same activity are quiet: no second notification.
            _ = try await net.ctl("a", "update", "--title", "Grocery run (Saturday)")
            try await eventually(10, "the update to reach b") { try await net.ctl("b", "list").stdout.contains("Grocery run (Saturday)") }
            // b's agent has the update on its way now, and must not notify; a notification
            // takes it milliseconds, so 1.5 s without one shows it stayed quiet.
            try await never(within: 1.5, because: "b's agent notified again for an update of the same activity") {
                try String(contentsOfFile: monitorLog, encoding: .utf8).components(separatedBy: "member=Notify").count - 1 != 1
            }
            // Clicking it (dunst's default action) continues and launches.
            let click = try await desk.run(["dunstctl", "action", "0"])
            #expect(click.status == 0, "\(click)")
            let record = try await desk.waitForRecord("editor")
            #expect((record["payload"] as? [String: Any])?["title"] as? String == "Grocery run (Saturday)", "\(record)")
            // An invalidated offer takes its notification away.
            _ = try await offer(net, ["--type", "org.example.editor.draft", "--title", "Draft"])
            try await eventually(15, "the second notification (after the rate limit)") {
                ((try? String(contentsOfFile: monitorLog, encoding: .utf8)) ?? "").contains("Continue \u{201C}Draft\u{201D}")
            }
            _ = try await net.ctl("a", "invalidate")
            try await eventually(10, "the notification to close") {
                try await desk.run(["dunstctl", "count", "displayed"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0"
            }
        }
    }
}
}
