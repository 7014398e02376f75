import HandoffControlAPI
@testable import HandoffDaemon
import HandoffCore
import HandoffTestSupport
import NIOCore
import NIOHTTP1
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The file handoffd writes a stream into for the continuing app (`into`): what it agrees
/// to open, that every byte lands in order, and how the request names it.
@Suite("Stream file sink")
struct StreamFileSinkTests {
    func temporaryDirectory() throws -> String { try makeTemporaryDirectory("handoff-sink") }

    func make(_ path: String, _ bytes: [UInt8] = []) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw SinkTestFailure("create \(path)") }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    func contents(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            out += chunk[0..<n]
        }
        return out
    }

    @Test func everyPieceLandsInOrder() async throws {
        let dir = try temporaryDirectory()
        defer { _ = system("rm -rf \(dir)") }
        let path = dir + "/out.bin"
        try make(path)
        let sink = try StreamFileSink.open(path)
        var expected: [UInt8] = []
        var generator = SystemRandomNumberGenerator()
        let block = (0..<262_144).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // Pieces of every size from anywhere in the block, several times what the queue
        // holds in all, so writes wait for room.
        for i in 0..<80 {
            let size = [1, 17, 16384, 100_000, 262_144][i % 5]
            let start = (i * 7919) % (block.count - size + 1)
            let piece = Array(block[start..<start + size])
            expected += piece
            try await sink.write(ByteBuffer(bytes: piece))
        }
        #expect(try await sink.finish() == Int64(expected.count))
        #expect(sink.written == Int64(expected.count))
        await sink.close()
        #expect(contents(path) == expected)
    }

    @Test func onlyAnEmptyRegularFileOrDevNull() async throws {
        let dir = try temporaryDirectory()
        defer { _ = system("rm -rf \(dir)") }
        try make(dir + "/full", [1, 2, 3])
        try make(dir + "/empty")
        #expect(symlink(dir + "/empty", dir + "/link") == 0)
        #expect(mkfifo(dir + "/fifo", 0o600) == 0)
        for path in [dir + "/full", dir + "/link", dir + "/fifo", dir, dir + "/missing", "/dev/zero", "/dev/full"] {
            let error = #expect(throws: StreamFailure.self, "\(path)") { _ = try StreamFileSink.open(path) }
            #expect(error?.code == "write_failed", "\(path)")
            #expect(error?.message.contains(path) == true, "\(path): \(String(describing: error))")
        }
        // The non-empty file is untouched.
        #expect(contents(dir + "/full") == [1, 2, 3])
        for path in [dir + "/empty", "/dev/null"] {
            let sink = try StreamFileSink.open(path)
            try await sink.write(ByteBuffer(bytes: [9, 9]))
            #expect(try await sink.finish() == 2)
            await sink.close()
        }
        #expect(contents(dir + "/empty") == [9, 9])
    }

    @Test func theRequestNamesAnAbsolutePath() {
        func request(_ uri: String) -> StreamRequest? {
            StreamRequest(head: HTTPRequestHead(version: .http1_1, method: .POST, uri: uri))
        }
        let id = ActivityID.random()
        #expect(request("/v1/streams?activity=\(id)") == .open(activityID: id))
        #expect(request("/v1/streams?activity=\(id)&into=/home/me/a%20b.mkv") == .open(activityID: id, into: "/home/me/a b.mkv"))
        #expect(request("/v1/streams?activity=\(id)&document=1&into=%2Fdev%2Fnull") == .open(activityID: id, document: true, into: "/dev/null"))
        for bad in ["into=relative/x", "into=", "into=/x%00y", "into=/x%G1", "into=/x%FF"] {
            #expect(request("/v1/streams?activity=\(id)&\(bad)") == nil, "\(bad)")
        }
    }

    @Test func clipboardRequestsNameATypeAndACopy() {
        func request(_ uri: String) -> StreamRequest? {
            StreamRequest(head: HTTPRequestHead(version: .http1_1, method: .POST, uri: uri))
        }
        let clip = ClipboardID.random()
        #expect(request("/v1/clipboard/paste") == .paste(id: nil, type: nil, into: nil))
        #expect(request(ControlEndpoint.pastePath(type: "text/plain;charset=utf-8", id: clip.rawValue, into: "/tmp/a b"))
            == .paste(id: clip, type: "text/plain;charset=utf-8", into: "/tmp/a b"))
        #expect(request(ControlEndpoint.copyPath(type: "image/png")) == .copy(type: "image/png"))
        for bad in ["/v1/clipboard/copy", "/v1/clipboard/copy?type=UTF8_STRING", "/v1/clipboard/paste?type=a%20b/c",
                    "/v1/clipboard/paste?id=123", "/v1/clipboard/paste?into=rel", "/v1/clipboard/copy?type=%ZZ"] {
            #expect(request(bad) == nil, "\(bad)")
        }
    }
}

struct SinkTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
