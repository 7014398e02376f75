import Foundation
import HandoffClient
import HandoffCore
import HandoffControlAPI
import HandoffStreamFrames
import NIOCore
import HandoffTestSupport
import Testing

/// The stream part of the control API on one daemon: the upgrade, its refusals, frames
/// from a misbehaving app, stream files, and the CLI's checks. Across two workstations:
/// ContinuationStreamTests.
@Suite struct StreamLocalAPITests {
    typealias Fixture = BadInputTests.Fixture

    /// Sends an upgrade request and reads everything until the daemon closes.
    func upgrade(_ f: Fixture, _ target: String, extra: String = "", then frames: [UInt8] = []) async throws -> (head: String, frames: [StreamFrame]) {
        let s = try RawUnixSocket(path: f.daemon.socketPath)
        // One write: frames right behind the request reach the daemon in the same read, the
        // path that once crashed it (and the daemon may answer and close before a second).
        try s.send(Array("POST \(target) HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: handoff-stream\r\nContent-Length: 0\r\n\(extra)\r\n".utf8) + frames)
        let (data, closed) = await s.readUntilClosed(timeout: 5)
        #expect(closed, "the daemon closes a stream it cannot serve")
        let text = String(decoding: data, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return (text, []) }
        let headLength = text[..<split.upperBound].utf8.count
        var rest = ByteBuffer(bytes: data.dropFirst(headLength))
        var frames: [StreamFrame] = []
        while let frame = try StreamFrameDecoder.next(&rest, maximumFrameBytes: 1 << 20) { frames.append(frame) }
        return (String(text[..<split.lowerBound]), frames)
    }

    @Test func withoutAnUpgradeItIs426() async throws {
        let f = try await Fixture.make()
        let r = try await f.post("/v1/streams?activity=\(ActivityID.random().rawValue)", "")
        #expect(r.status == 426)
        #expect(r.body.contains("upgrade_required") && r.body.contains("Upgrade: handoff-stream"))
        try await f.unharmed()
    }

    @Test func badParametersAreA400NotAHang() async throws {
        let f = try await Fixture.make()
        for target in ["/v1/streams?activity=zz", "/v1/streams", "/v1/streams/nothex/accept"] {
            let s = try RawUnixSocket(path: f.daemon.socketPath)
            try s.send("POST \(target) HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: handoff-stream\r\nContent-Length: 0\r\n\r\n")
            let r = try await s.readResponse()
            #expect(r.status == 400, "\(target): \(r)")
            #expect(r.body.contains("bad_request"), "\(target): \(r)")
        }
        // Another protocol's upgrade on an ordinary route is simply not done.
        let s = try RawUnixSocket(path: f.daemon.socketPath)
        try s.send("GET /v1/status HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
        #expect(try await s.readResponse().status == 200)
        try await f.unharmed()
    }

    @Test func nothingToStreamToIsAnErrorFrame() async throws {
        let f = try await Fixture.make()
        let open = try await upgrade(f, "/v1/streams?activity=\(ActivityID.random().rawValue)")
        #expect(open.head.hasPrefix("HTTP/1.1 101"), "\(open.head)")
        guard case .error(let code, let message)? = open.frames.first else { throw TestFailure("no error frame: \(open.frames)") }
        #expect(code == "not_offered")
        #expect(message.contains("continue it first"))
        let accept = try await upgrade(f, "/v1/streams/\(ActivityID.random().rawValue)/accept", extra: "Handoff-Stream-Length: 12\r\n")
        #expect(accept.head.hasPrefix("HTTP/1.1 101"))
        #expect(accept.frames.first.map { if case .error("unknown_stream", _) = $0 { true } else { false } } == true, "\(accept.frames)")
        let refuse = try await f.post("/v1/streams/\(ActivityID.random().rawValue)/refuse", #"{"reason":"no"}"#)
        #expect(refuse.status == 404 && refuse.body.contains("unknown_stream"), "\(refuse)")
        let unknownField = try await f.post("/v1/streams/\(ActivityID.random().rawValue)/refuse", #"{"why":"no"}"#)
        #expect(unknownField.status == 400, "\(unknownField)")
        try await f.unharmed()
    }

    @Test func garbageAfterTheUpgradeHarmsNothing() async throws {
        let f = try await Fixture.make()
        for junk: [UInt8] in [[0xFF, 0xFF, 0xFF, 0xFF, 0x10], [0, 0, 0, 1, 0x42], [0, 0, 0, 0]] {
            _ = try await upgrade(f, "/v1/streams?activity=\(ActivityID.random().rawValue)", then: junk)
        }
        try await f.unharmed()
    }

    @Test func streamFilesAreCheckedAndSurviveRestarts() async throws {
        let f = try await Fixture.make()
        let file = f.daemon.directory + "/bulk.bin"
        try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: file))
        func make(_ extra: String) async throws -> (status: Int, body: String) {
            try await f.post("/v1/activities", #"{"activityType":"com.example.bulk"\#(extra)}"#)
        }
        for (extra, expected) in [
            (#","streamFile":"relative.bin""#, "absolute"),
            (#","streamFile":"/nonexistent/x""#, "No such file"),
            (#","streamFile":"\#(f.daemon.directory)""#, "not a regular file"),
            (#","streamFile":7"#, "must be a string"),
            (#","supportsContinuationStreams":true"#, "only from a file"),
        ] {
            let r = try await make(extra)
            #expect(r.status == 422 || r.status == 400, "\(extra): \(r)")
            #expect(r.body.contains(expected), "\(extra): \(r)")
        }
        // A session's activity is served by its app, not a file.
        let session = try await f.client.openSession()
        let withSession = try await make(#","streamFile":"\#(file)","session":"\#(session.token)""#)
        #expect(withSession.status == 400 && withSession.body.contains("owning app"), "\(withSession)")
        session.close()
        try await f.unharmed()

        let made = try await make(#","streamFile":"\#(file)""#)
        #expect(made.status == 201, "\(made)")
        let record = try ActivityRecord(json: try JSONValue(parsing: made.body))
        #expect(record.streamFile == file)
        #expect(record.activity.supportsContinuationStreams, "a stream file implies streams")
        // Saved with the activity: after a restart it still serves the same file.
        _ = await f.daemon.stop()
        let restarted = try await DaemonProcess(directory: f.daemon.directory).start()
        defer { Task { _ = await restarted.stop() } }
        let again = try #require(try await HandoffClient(socketPath: restarted.socketPath).current())
        #expect(again.activity.id == record.activity.id)
        #expect(again.streamFile == file)
    }

    @Test func theCommandLineChecksStreamOptions() async throws {
        let daemon = try await DaemonProcess().start()
        for args in [
            ["become-current", "--type", "com.example.x", "--stream-exec", "cat"],
            ["become-current", "--type", "com.example.x", "--attach", "--stream-file", "/etc/hostname"],
            ["become-current", "--type", "com.example.x", "--streams"],
            ["continue", "--json", "--stream-to", "-"],
            ["continue", "--stream-to", "-", "--stream-from", "-"],
        ] {
            let r = try await CommandLineTool.handoffctl(args, daemon: daemon)
            #expect(r.status == 2, "\(args): \(r)")
            #expect(!r.stderr.isEmpty)
        }
        let missing = try await CommandLineTool.handoffctl(["become-current", "--type", "com.example.x", "--stream-file", "no-such-file"], daemon: daemon)
        #expect(missing.status == 2 && missing.stderr.contains("no-such-file"), "\(missing)")
        // A relative path is made absolute for the daemon, whose working directory differs.
        let r = try await CommandLineTool.handoffctl(["become-current", "--type", "com.example.x", "--stream-file", "Package.swift"], daemon: daemon)
        #expect(r.status == 0, "\(r)")
        #expect(try await HandoffClient(socketPath: daemon.socketPath).current()?.streamFile == TestEnvironment.packageRoot + "/Package.swift")
    }
}
