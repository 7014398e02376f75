import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

/// Documents across synced folders: the origin names a file in a Syncthing folder; the
/// continuing workstation, which syncs the same folder (same folder ID) at another path,
/// opens its own copy when it is the same, and a copy fetched through a continuation
/// stream when it is missing, different, or would lead out of the folder. Root only.
extension WorkstationTests {
@Suite struct DocumentHandoffTests {
    static let folderID = "abcde-fghij"

    func syncthingConfig(_ path: String) -> String {
        """
        <configuration version="37">
            <folder id="other-folder" label="Photos" path="/nonexistent/Photos" type="sendreceive"></folder>
            <folder id="\(Self.folderID)" label="Notes &amp; more" path="\(path)" type="sendreceive" rescanIntervalS="3600">
                <device id="AAAAAAA-AAAAAAA" introducedBy=""></device>
            </folder>
            <gui enabled="true"><address>127.0.0.1:8384</address></gui>
        </configuration>
        """
    }

    func write(_ text: String, _ path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// HOST's graphical session, its agent running, with "Editor" the app for text/plain
    /// (it records how it was opened as "editor").
    func editorDesktop(_ net: NetnsRun, _ host: String) async throws -> DesktopSession {
        let desk = try DesktopSession(net, host: host)
        try desk.addEntry("org.example.Editor.desktop", name: "Editor", lines: ["MimeType=text/plain;"], recordAs: "editor")
        try "[Default Applications]\ntext/plain=org.example.Editor.desktop\n"
            .write(toFile: desk.configHome + "/mimeapps.list", atomically: true, encoding: .utf8)
        try await desk.startBus()
        try await desk.startAgent(["--no-notifications"], environment: ["XDG_DATA_DIRS": desk.root + "/system:/usr/share"])
        return desk
    }

    /// Continuing from the history reopens the document: b's own copy in its synced
    /// folder, in the app for its type, long after the offer is gone.
    @Test func aDocumentReopensFromTheHistory() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            let syncA = net.directory + "/a/Sync", syncB = net.directory + "/b/Elsewhere/SyncB"
            try write(syncthingConfig(syncA), net.directory + "/a/state/syncthing/config.xml")
            try write(syncthingConfig(syncB), net.directory + "/b/state/syncthing/config.xml")
            try write("plan\n", syncA + "/projects/plan.txt")
            try write("plan\n", syncB + "/projects/plan.txt")
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let desk = try await editorDesktop(net, "b")
            defer { desk.stop() }

            try await net.offer(from: "a", to: "b", ["--type", "org.example.planner.plan", "--title", "Launch plan", "--search",
                                                     "--document", syncA + "/projects/plan.txt"])
            _ = try await net.ctl("a", "invalidate")  // the offer is gone; the history is not
            let listed = try await net.ctl("b", "--json", "history", "launch")
            let entry = try #require((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])?["entries"] as? [[String: Any]])
            #expect(entry.first?["documentPath"] as? String == "projects/plan.txt", "\(listed)")
            let id = try #require(entry.first?["id"] as? Int)
            let reopened = try await net.ctl("b", "history", "--open", String(id))
            #expect(reopened.status == 0 && reopened.stdout.contains("in Editor"), "\(reopened)\n\(desk.log)")
            let record = try await desk.waitForRecord("editor")
            let uri = (record["argv"] as? [String])?.first ?? ""
            #expect((URL(string: uri)?.path ?? uri) == syncB + "/projects/plan.txt", "\(record)")
        }
    }

    @Test func syncedDocumentsMapOrAreFetched() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            let syncA = net.directory + "/a/Sync", syncB = net.directory + "/b/Elsewhere/SyncB"
            try write(syncthingConfig(syncA), net.directory + "/a/state/syncthing/config.xml")
            try write(syncthingConfig(syncB), net.directory + "/b/state/syncthing/config.xml")
            let text = (1...5000).map { "line \($0) of the shopping list" }.joined(separator: "\n") + "\n"
            try write(text, syncA + "/notes/list.txt")
            try write(text, syncB + "/notes/list.txt")
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let desk = try DesktopSession(net, host: "b")
            defer { desk.stop() }
            try desk.addEntry("org.example.Editor.desktop", name: "Editor", lines: [
                "MimeType=text/plain;", "X-Handoff-ActivityTypes=org.example.editor.edit-note;",
            ], recordAs: "editor")
            try "[Default Applications]\ntext/plain=org.example.Editor.desktop\napplication/octet-stream=org.example.Editor.desktop\n"
                .write(toFile: desk.configHome + "/mimeapps.list", atomically: true, encoding: .utf8)
            try await desk.startBus()
            try await desk.startAgent(["--no-notifications"], environment: ["XDG_DATA_DIRS": desk.root + "/system:/usr/share"])

            func offer(_ args: [String], stdin: String? = nil) async throws {
                try await net.offer(from: "a", to: "b", args, stdin: stdin)
            }
            func opened() async throws -> (CommandResult, [String: Any]) {
                try? FileManager.default.removeItem(atPath: desk.records + "/editor.json")
                let r = try await net.ctl("b", "continue")
                guard r.status == 0 else { throw TestFailure("continue: \(r)\n\(desk.log)") }
                return (r, try await desk.waitForRecord("editor"))
            }
            func argvPath(_ record: [String: Any]) -> String {
                let uri = (record["argv"] as? [String])?.first ?? ""
                return URL(string: uri)?.path ?? uri
            }

            // The same file in the same folder here: b opens its own copy.
            try await offer(["--type", "org.example.viewer.view", "--title", "List", "--document", syncA + "/notes/list.txt"])
            var (r, record) = try await opened()
            #expect(r.stdout.contains("in Editor (org.example.Editor.desktop)") && r.stdout.contains("your own copy in the synced folder"), "\(r)")
            #expect(argvPath(record) == syncB + "/notes/list.txt", "\(record)")
            #expect((record["env"] as? [String: String])?["HANDOFF_DOCUMENT"] == syncB + "/notes/list.txt")

            // Missing here: fetched through a stream, byte for byte.
            try FileManager.default.removeItem(atPath: syncB + "/notes/list.txt")
            (r, record) = try await opened()
            #expect(r.stdout.contains("opened a copy fetched from ws-a, because it is not at \(syncB)/notes/list.txt"), "\(r)")
            var copy = argvPath(record)
            #expect(copy.hasPrefix(desk.root + "/.cache/handoff/documents/") && copy.hasSuffix("/list.txt"), "\(copy)")
            #expect(try String(contentsOfFile: copy, encoding: .utf8) == text)

            // Different here: the origin's version is fetched, the local one left alone.
            try write("my own edits\n", syncB + "/notes/list.txt")
            (r, record) = try await opened()
            #expect(r.stdout.contains("differs from ws-a's"), "\(r)")
            copy = argvPath(record)
            #expect(try String(contentsOfFile: copy, encoding: .utf8) == text)
            #expect(try String(contentsOfFile: syncB + "/notes/list.txt", encoding: .utf8) == "my own edits\n")

            // A symbolic link out of the folder is never followed: a fetched copy instead.
            try FileManager.default.removeItem(atPath: syncB + "/notes/list.txt")
            try write(text, net.directory + "/b/outside/list.txt")
            try FileManager.default.createSymbolicLink(atPath: syncB + "/notes/list.txt", withDestinationPath: net.directory + "/b/outside/list.txt")
            (r, record) = try await opened()
            #expect(r.stdout.contains("leads out of the synced folder"), "\(r)")
            #expect(!argvPath(record).hasPrefix(net.directory + "/b/outside"), "\(record)")

            // A handler for the type gets the activity, with the document in HANDOFF_DOCUMENT.
            try FileManager.default.removeItem(atPath: syncB + "/notes/list.txt")
            try write(text, syncB + "/notes/list.txt")
            try await offer(["--type", "org.example.editor.edit-note", "--title", "Edit", "--document", syncA + "/notes/list.txt"])
            (r, record) = try await opened()
            #expect((record["argv"] as? [String])?.first?.hasPrefix("handoff:continued/") == true, "\(record)")
            #expect((record["env"] as? [String: String])?["HANDOFF_DOCUMENT"] == syncB + "/notes/list.txt")

            // A program or launcher in the synced folder is never opened for another machine.
            try write("#!/bin/sh\necho gotcha\n", syncA + "/notes/run.sh")
            try write("#!/bin/sh\necho gotcha\n", syncB + "/notes/run.sh")
            try? FileManager.default.removeItem(atPath: desk.records + "/editor.json")
            try await offer(["--type", "org.example.viewer.view", "--title", "Script", "--document", syncA + "/notes/run.sh"])
            let program = try await net.ctl("b", "continue")
            #expect(program.status == 1 && program.stderr.contains("is a program or launcher"), "\(program)")

            // A hostile reference that climbs out of the folder: refused, nothing opened.
            try? FileManager.default.removeItem(atPath: desk.records + "/editor.json")
            let hostile = #"{"handoff.document":{"root":{"kind":"syncthing","id":"abcde-fghij"},"path":"../../../etc/passwd","size":1,"sha256":{"$data":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}}"#
            try await offer(["--type", "org.example.viewer.view", "--title", "Sneaky", "--info-json", "-"], stdin: hostile)
            let refused = try await net.ctl("b", "continue")
            #expect(refused.status == 1 && refused.stderr.contains("would leave its folder"), "\(refused)")
            // A launch happens before continue answers, and a launched recorder writes its
            // record within a fraction of this second.
            try await never(within: 1, because: "an app opened a reference that leaves its folder") { try desk.record("editor") != nil }
        }
    }
}
}
