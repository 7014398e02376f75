import Foundation
import HandoffClient
import HandoffCore
import HandoffTestSupport
import Testing

/// A request the client could not write whole is sent once more on a new connection
/// (handoffd acts only on whole requests, and closes a connection left idle, as a client
/// starved of CPU between its connect and its write leaves it); a request written whole and
/// then unanswered is never sent again, since handoffd may have acted on it.
@Suite struct RequestResendTests {
    /// Serves one connection per mode given, in order, and appends each mode to
    /// `path + ".log"` when its connection is done. drop: reads nothing, closes after 0.5 s
    /// (a write larger than the socket's buffer then fails); answer: reads the whole
    /// request and answers an API error naming the connection; silent: reads the whole
    /// request and closes without an answer.
    static let server = #"""
        import socket, sys, time
        path = sys.argv[1]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.listen(8)
        s.settimeout(60)  # gone by itself if its test never comes
        print("ready", flush=True)
        def whole_request(c):
            data = b""
            while b"\r\n\r\n" not in data:
                data += c.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            while len(body) < length:
                b = c.recv(65536)
                if not b: break
                body += b
        for n, mode in enumerate(sys.argv[2:]):
            c, _ = s.accept()
            if mode == "drop":
                time.sleep(0.5)
            else:
                whole_request(c)
                if mode == "answer":
                    body = b'{"error": {"code": "connection_%d", "message": "answered on connection %d"}}' % (n + 1, n + 1)
                    c.sendall(b"HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
            c.close()
            with open(path + ".log", "a") as log:
                log.write(mode + "\n")
        """#

    func startServer(at path: String, _ modes: [String]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", Self.server, path] + modes
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        guard line.hasPrefix("ready") else { throw TestFailure("the test server did not start: \(line)") }
        return p
    }

    /// An activity of 2 MB: more than a Unix socket buffers, so the write is still under way
    /// when a server that reads nothing closes.
    var bigDraft: ActivityDraft {
        var d = ActivityDraft(activityType: "com.example.big")
        d.userInfo = ["pad": .string(String(repeating: "x", count: 2 << 20))]
        return d
    }

    func served(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path + ".log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test(arguments: [false, true])
    func aRequestCutOffBeforeItWasSentGoesOnceMore(blocking: Bool) async throws {
        let dir = try TestEnvironment.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/handoffd.sock"
        let server = try startServer(at: path, ["drop", "answer"])
        defer { kill(server.processIdentifier, SIGKILL) }
        do {
            _ = try await HandoffClient(socketPath: path, blocking: blocking).becomeCurrent(bigDraft)
            Issue.record("the test server's error was not reported")
        } catch HandoffClientError.api(let e) {
            #expect(e.code == "connection_2", "\(e)")
        }
        try await eventually("the server to log both connections") { served(path).count == 2 }
        #expect(served(path) == ["drop", "answer"])
    }

    @Test(arguments: [false, true])
    func aRequestSentWholeIsNeverSentAgain(blocking: Bool) async throws {
        let dir = try TestEnvironment.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/handoffd.sock"
        let server = try startServer(at: path, ["silent", "answer"])
        defer { kill(server.processIdentifier, SIGKILL) }
        do {
            _ = try await HandoffClient(socketPath: path, blocking: blocking).becomeCurrent(bigDraft)
            Issue.record("an unanswered request was reported as answered")
        } catch HandoffClientError.connectionLost(let m) {
            #expect(m.contains("closed the connection before answering"), "\(m)")
        }
        // A second try would have had the server's answer, not this error.
        try await eventually("the server to log the first connection") { served(path).count == 1 }
        #expect(served(path) == ["silent"])
    }

    @Test(arguments: [false, true])
    func twoCutOffsInARowAreOneClearError(blocking: Bool) async throws {
        let dir = try TestEnvironment.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/handoffd.sock"
        let server = try startServer(at: path, ["drop", "drop", "answer"])
        defer { kill(server.processIdentifier, SIGKILL) }
        do {
            _ = try await HandoffClient(socketPath: path, blocking: blocking).becomeCurrent(bigDraft)
            Issue.record("two cut-off requests were reported as answered")
        } catch HandoffClientError.connectionLost(let m) {
            #expect(m.contains("twice"), "\(m)")
        }
        // A third try would have had the server's answer, not this error.
        try await eventually("the server to log both connections") { served(path).count == 2 }
        #expect(served(path) == ["drop", "drop"])
    }
}
