import Foundation
import HandoffClient
import HandoffCore
import HandoffTestSupport
import Testing

/// Restorable app state as an app and its user meet it, against a real handoffd.
@Suite struct RestorationTests {
    let app = "org.example.Editor"
    let entries: JSONObject = ["Tabs/Nav/Editor": .object(["file": .string("notes.md"), "line": .integer(12)]),
                               "Tabs/Nav": .array([.string("notes.md"), .string("todo.md")])]

    @Test func stateComesBackAfterARestartAndGoesWhenTheVersionChanges() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        try await client.saveState(app: app, version: "2.1", entries: entries)
        await daemon.stop()
        try await daemon.start()
        let back = try await client.restoreState(app: app, version: "2.1")
        #expect(back.state == entries && back.reason == nil)
        try await client.stateRestored(app: app)
        let listed = try await CommandLineTool.handoffctl(["state"], daemon: daemon)
        #expect(listed.stdout.contains("org.example.Editor  version 2.1") && listed.stdout.contains("2 paths"), "\(listed)")
        // A newer version that accepts older state gets it; one that does not, discards it.
        #expect(try await client.restoreState(app: app, version: "2.2", acceptOlder: true).state == entries)
        try await client.stateRestored(app: app)
        let changed = try await client.restoreState(app: app, version: "2.2")
        #expect(changed.state == nil && changed.reason == "version_changed")
        #expect(try await client.restoreState(app: app, version: "2.1").reason == "none_saved", "discarded for good")
    }

    /// The crash-loop purge: two launches whose app died (its session ended) before it
    /// said it was up; the third launch gets nothing.
    @Test func twoCrashesWhileRestoringDiscardTheState() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        try await client.saveState(app: app, version: "1", entries: entries)
        for _ in 0..<2 {
            let session = try await client.openSession()
            #expect(try await client.restoreState(app: app, version: "1", session: session.token).state == entries)
            session.close()  // the app dies while restoring
            try await eventually("handoffd to see the session end") { try await client.status().sessions == 0 }
        }
        let third = try await client.restoreState(app: app, version: "1")
        #expect(third.state == nil && third.reason == "crash_loop", "\(third)")
        #expect(try await CommandLineTool.handoffctl(["state"], daemon: daemon).stdout.contains("no app has saved"))
    }

    @Test func theUserDiscardsAndBadInputHarmsNothing() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        try await client.saveState(app: app, version: "1", entries: entries)
        for (path, body) in [("/v1/state/bad%2Fapp", #"{"version":"1"}"#), ("/v1/state/\(app)", #"{"version":"1","entries":{"a//b":1}}"#),
                             ("/v1/state/\(app)", #"{"entries":{}}"#), ("/v1/state/\(app)", #"{"version":"1","extra":true}"#)] {
            let s = try RawUnixSocket(path: daemon.socketPath)
            try s.send("PUT \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
            let r = try await s.readResponse()
            #expect(r.status == 400, "\(path) \(body): \(r)")
        }
        #expect(try await client.restoreState(app: app, version: "1").state == entries, "still there")
        let discard = try await CommandLineTool.handoffctl(["state", "--discard", app], daemon: daemon)
        #expect(discard.status == 0 && discard.stdout.contains("discarded"), "\(discard)")
        let again = try await CommandLineTool.handoffctl(["state", "--discard", app], daemon: daemon)
        #expect(again.status == 1 && again.stderr.contains("no restoration state"), "\(again)")
    }

    @Test func anUnreadableFileIsKeptAsideAtStart() async throws {
        let daemon = try DaemonProcess()
        let dir = daemon.stateDirectory + "/restoration"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "{not json".write(toFile: dir + "/org.example.Broken.json", atomically: true, encoding: .utf8)
        try await daemon.start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        #expect(try await client.restoreState(app: "org.example.Broken", version: "1").reason == "none_saved")
        #expect(FileManager.default.fileExists(atPath: dir + "/org.example.Broken.json.unreadable"))
        #expect(daemon.log().contains("restoration state unreadable"))
    }
}
