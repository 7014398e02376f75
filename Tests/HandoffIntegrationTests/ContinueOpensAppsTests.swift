import Foundation
import HandoffCore
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
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let desk = try DesktopSession(net, host: "b")
            defer { desk.stop() }
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

    func offer(_ net: NetnsRun, _ args: [String], stdin: String? = nil) async throws -> String {
        let made = try await net.ctl("a", ["become-current", "--json"] + args, stdin: stdin)
        guard made.status == 0 else { throw TestFailure("become-current: \(made)") }
        let id = try json(made.stdout)["id"] as? String ?? ""
        try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains(id) }
        return id
    }

    @Test func handlerGetsTheFullPayloadAndOpensAStream() async throws {
        try await withDesktop { net, desk in
            let source = net.directory + "/note-body.bin"
            _ = try await net.exec("a", ["/bin/sh", "-c", "head -c 3000000 /dev/urandom > \(source)"])
            // Every value type, through the payload and back.
            let info = #"{"s":"Grüße \"quoted\"","i":-42,"d":1.5,"b":true,"data":{"$data":"AAEC/w=="},"date":{"$date":"2026-11-21T10:00:00.123456789Z"},"url":{"$url":"https://example.org/x?y=1"},"list":[1,"two",[3]],"dict":{"k":{"n":null}},"set":{"$set":["a","b"]},"nothing":null}"#
            let activityID = try await offer(net, ["--type", "org.example.editor.edit-note", "--title", "Shopping list",
                                                   "--info-json", "-", "--stream-file", source], stdin: info)
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
}
}
