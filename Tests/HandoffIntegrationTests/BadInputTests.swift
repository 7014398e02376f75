import Foundation
import HandoffClient
import HandoffCore
import HandoffControlAPI
import HandoffTestSupport
import Testing

/// Bad input from a client gets a clear 4xx and harms nothing: the daemon keeps serving
/// and the current activity is unchanged.
@Suite struct BadInputTests {
    /// A daemon with a current activity, and a check that both survived.
    struct Fixture {
        let daemon: DaemonProcess
        let client: HandoffClient
        let current: ActivityRecord

        static func make(_ args: [String] = []) async throws -> Fixture {
            let daemon = try await DaemonProcess(arguments: args).start()
            let client = HandoffClient(socketPath: daemon.socketPath)
            var d = ActivityDraft(activityType: "com.example.precious")
            d.userInfo = ["keep": .string("me")]
            return Fixture(daemon: daemon, client: client, current: try await client.becomeCurrent(d))
        }

        func unharmed() async throws {
            #expect(daemon.process?.isRunning == true)
            let now = try await client.current()
            #expect(now?.activity == current.activity)
        }

        func request(_ raw: String) async throws -> (status: Int, body: String) {
            let s = try RawUnixSocket(path: daemon.socketPath)
            try s.send(raw)
            return try await s.readResponse()
        }

        func post(_ path: String, _ body: String, method: String = "POST") async throws -> (status: Int, body: String) {
            try await request("\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        }
    }

    func errorCode(_ body: String) -> String? {
        guard let json = try? JSONValue(parsing: body), let e = APIError(status: 0, body: json) else { return nil }
        return e.code
    }

    @Test(arguments: [
        ("{\"activityType\": \"com.example.x\"", "invalid_json"),  // truncated
        ("{\"activityType\": com.example.x}", "invalid_json"),  // malformed
        ("[1,2,3]", "bad_request"),  // not an object
        ("{\"activityType\": \"com.example.x\", \"colour\": 1}", "invalid_activity"),  // unknown field
        ("{\"activityType\": 5}", "invalid_activity"),  // wrong type
        ("{\"activityType\": \"com.example.x\", \"userInfo\": {\"a\": {\"$bogus\": 1}}}", "invalid_activity"),  // unknown value type
        ("{\"activityType\": \"com.example.x\", \"userInfo\": {\"a\": {\"$date\": \"yesterday\"}}}", "invalid_activity"),
        ("{\"activityType\": \"com.example.x\", \"webpageURL\": \"javascript:alert(1)\"}", "invalid_activity"),
        ("{\"activityType\": \"nodots\"}", "invalid_activity"),
        ("{\"activityType\": \"com.example.x\", \"userInfo\": {\"n\": 99999999999999999999}}", "invalid_json"),
        ("{\"title\": \"no type\"}", "invalid_activity"),
    ])
    func malformedBodiesAreRefused(body: String, code: String) async throws {
        let f = try await Fixture.make()
        let (status, text) = try await f.post("/v1/activities", body)
        #expect((400..<500).contains(status), "status \(status): \(text)")
        #expect(errorCode(text) == code, "\(text)")
        try await f.unharmed()
    }

    @Test func badUpdateLeavesTheActivityAlone() async throws {
        let f = try await Fixture.make()
        for body in ["{\"userInfoMode\": \"sideways\"}", "{\"title\": 3}", "{\"nope\": true}", "{\"userInfo\": [1]}", "{"] {
            let (status, text) = try await f.post("/v1/activities/current", body, method: "PATCH")
            #expect((400..<500).contains(status), "\(body) -> \(status) \(text)")
        }
        try await f.unharmed()
    }

    @Test func unknownRoutesAndMethods() async throws {
        let f = try await Fixture.make()
        var r = try await f.request("GET /v2/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(r.status == 404)
        #expect(errorCode(r.body) == "not_found")
        r = try await f.request("DELETE /v1/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(r.status == 405)
        r = try await f.request("GET /v1/activities/not-an-id HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(r.status == 400)
        r = try await f.request("GET /v1/activities/0123456789abcdef0123456789abcdef HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(r.status == 404)
        try await f.unharmed()
    }

    @Test func oversizedBodiesAreRefusedUnread() async throws {
        let f = try await Fixture.make(["--max-activity-bytes", "4096"])  // body cap: 256 KiB
        // Declared too large: refused before a byte of body is read.
        let s = try RawUnixSocket(path: f.daemon.socketPath)
        try s.send("POST /v1/activities HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
        let (status, body) = try await s.readResponse()
        #expect(status == 413)
        #expect(errorCode(body) == "body_too_large")
        // Chunked with no declared length: cut off once it passes the cap.
        let c = try RawUnixSocket(path: f.daemon.socketPath)
        try c.send("POST /v1/activities HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = String(repeating: "a", count: 65536)
        var refused = false
        for _ in 0..<16 {
            do { try c.send(String(65536, radix: 16) + "\r\n" + chunk + "\r\n") } catch { refused = true; break }
        }
        let reply = await c.readUntilClosed(timeout: 5)
        #expect(refused || String(decoding: reply.data, as: UTF8.self).contains("413"))
        try await f.unharmed()
    }

    @Test func garbageIsAnsweredAndClosed() async throws {
        let f = try await Fixture.make()
        let s = try RawUnixSocket(path: f.daemon.socketPath)
        var junk = [UInt8](repeating: 0, count: 4096)
        for i in junk.indices { junk[i] = UInt8(truncatingIfNeeded: i &* 131 &+ 7) }
        try s.send(junk)
        let (data, closed) = await s.readUntilClosed(timeout: 5)
        #expect(closed)
        #expect(String(decoding: data, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        try await f.unharmed()
    }

    @Test func slowClientGetsRequestTimeout() async throws {
        let f = try await Fixture.make(["--request-timeout-ms", "1500", "--idle-timeout-ms", "2000"])
        let slow = try RawUnixSocket(path: f.daemon.socketPath)
        try slow.send("POST /v1/activities HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{\"activ")
        let (data, closed) = await slow.readUntilClosed(timeout: 10)
        #expect(closed)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 408"))
        #expect(text.contains("request_timeout"))
        // An idle connection that never sends anything is closed too.
        let idle = try RawUnixSocket(path: f.daemon.socketPath)
        let (_, idleClosed) = await idle.readUntilClosed(timeout: 10)
        #expect(idleClosed)
        try await f.unharmed()
    }

    @Test func connectionCapRefusesTheExcess() async throws {
        let f = try await Fixture.make(["--max-connections", "4"])
        var held: [RawUnixSocket] = []
        for _ in 0..<4 {
            let s = try RawUnixSocket(path: f.daemon.socketPath)
            try s.send("GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n")  // keep-alive: stays open
            _ = try await s.readResponse()
            held.append(s)
        }
        let extra = try RawUnixSocket(path: f.daemon.socketPath)
        try extra.send("GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n")
        let (status, body) = try await extra.readResponse()
        #expect(status == 503)
        #expect(errorCode(body) == "too_many_connections")
        for s in held { s.close() }
        try await eventually("a connection slot to free up") {
            (try? await f.client.status()) != nil
        }
        try await f.unharmed()
    }

    @Test func eventReaderThatNeverReadsIsCutOff() async throws {
        let f = try await Fixture.make()
        let lazy = try RawUnixSocket(path: f.daemon.socketPath)
        try lazy.send("GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
        // Thousands of events with big payloads while the reader never reads.
        var d = ActivityDraft(activityType: "com.example.flood")
        d.userInfo = ["pad": .string(String(repeating: "x", count: 2000))]
        let flood = try await f.client.becomeCurrent(d)
        for i in 0..<2500 {
            var u = ActivityUpdate()
            u.userInfo = ["i": .integer(Int64(i))]
            _ = try await f.client.update(flood.activity.id.rawValue, u)
        }
        #expect(f.daemon.process?.isRunning == true)
        #expect(try await f.client.status().sessions <= 1)
        lazy.close()
        try await eventually("the lazy session to be dropped") { try await f.client.status().sessions == 0 }
    }
}
