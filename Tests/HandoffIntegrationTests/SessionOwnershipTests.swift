import Foundation
import HandoffClient
import HandoffCore
import HandoffTestSupport
import Testing

/// Activities made through an event-stream session die with the session.
@Suite struct SessionOwnershipTests {
    @Test func sessionEndInvalidatesItsActivities() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let watcher = EventRecorder(try await client.openSession())
        let owner = try await client.openSession()
        var d = ActivityDraft(activityType: "com.example.owned")
        d.title = "owned"
        let owned = try await client.becomeCurrent(d, session: owner.token)
        #expect(owned.owner == "session")
        // A daemon-owned activity made meanwhile is not touched by the session's end.
        let other = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.daemon"))
        owner.close()
        let e = try await watcher.waitFor("owned invalidated") {
            if case .invalidated(let r, _) = $0 { return r.activity.id == owned.activity.id } else { return false }
        }
        if case .invalidated(_, let reason) = e { #expect(reason == "owner-session-ended") }
        #expect(try await client.activity(owned.activity.id.rawValue).state == .invalidated)
        #expect(try await client.current()?.activity.id == other.activity.id)
    }

    @Test func currentSessionActivityGoesWhenItsAppDies() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        // A raw connection stands for an app that crashes: the kernel closes its socket.
        let app = try RawUnixSocket(path: daemon.socketPath)
        try app.send("GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
        var token = ""
        try await eventually("session token") {
            let (data, _) = await app.readUntilClosed(timeout: 0.2)
            let text = String(decoding: data, as: UTF8.self)
            if let r = text.range(of: "\"session\":\"") {
                token = String(text[r.upperBound...].prefix(32))
            }
            return !token.isEmpty
        }
        let owned = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.crashy"), session: token)
        #expect(try await client.current()?.activity.id == owned.activity.id)
        // Every event for it is written before it dies (its became-current has arrived):
        // nothing more will be written to its connection, so only the end of the
        // connection itself can tell handoffd.
        var received = ""
        try await eventually("the app to receive its became-current event") {
            let (data, _) = await app.readUntilClosed(timeout: 0.2)
            received += String(decoding: data, as: UTF8.self)
            return received.contains("\"became-current\"")
        }
        app.close()
        do {
            try await eventually("the crashed app's activity to be invalidated") {
                try await client.activity(owned.activity.id.rawValue).state == .invalidated
            }
        } catch {
            let status = try? await client.status()
            let record = try? await client.activity(owned.activity.id.rawValue)
            throw TestFailure("\(error)\nsessions open: \(status?.sessions ?? -1); activity: \(String(describing: record?.state)) owner \(String(describing: record?.owner))\n--- handoffd ---\n\(daemon.log().split(separator: "\n").suffix(30).joined(separator: "\n"))")
        }
        #expect(try await client.current() == nil)
    }

    /// An app that starts a child the careless way (posix_spawn, no descriptors closed)
    /// while its session is open: closing the session still ends it. Were the client's
    /// socket inheritable, the child would hold the connection open and handoffd would
    /// never see the end (the official CI met this: the netns hosts other tests started
    /// held test sessions open for minutes).
    @Test func aChildOfTheAppDoesNotKeepItsSessionOpen() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let session = try await client.openSession()
        _ = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.parent"), session: session.token)
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("60"), nil]
        defer { for p in argv { free(p) } }
        #expect(posix_spawn(&pid, "/bin/sleep", nil, nil, argv, environ) == 0)
        defer {
            kill(pid, SIGKILL)
            var st: Int32 = 0
            waitpid(pid, &st, 0)
        }
        session.close()
        try await eventually("handoffd to see the session end while the child lives") { try await client.status().sessions == 0 }
        #expect(try await client.current() == nil)
    }

    @Test func unknownSessionIsRefused() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        do {
            _ = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.x"), session: "0123456789abcdef0123456789abcdef")
            Issue.record("an unknown session was accepted")
        } catch HandoffClientError.api(let e) {
            #expect(e.code == "unknown_session")
            #expect(e.status == 409)
        }
        #expect(try await client.current() == nil)
    }

    @Test func sessionsSeeEventsButOnlyTheOwnerGetsWillSave() async throws {
        let daemon = try await DaemonProcess(arguments: ["--will-save-timeout-ms", "300"]).start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let owner = try await client.openSession()
        let ownerEvents = EventRecorder(owner)
        let bystander = EventRecorder(try await client.openSession())
        var d = ActivityDraft(activityType: "com.example.ws")
        d.needsSave = true
        let a = try await client.becomeCurrent(d, session: owner.token)
        _ = try await client.snapshot(a.activity.id.rawValue)
        _ = try await ownerEvents.waitFor("will-save at the owner") { $0.name == "will-save" }
        _ = try await bystander.waitFor("became-current at the bystander") { $0.name == "became-current" }
        #expect(await !bystander.names().contains("will-save"))
    }
}
