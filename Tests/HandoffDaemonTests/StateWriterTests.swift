import Foundation
@testable import HandoffDaemon
import Testing

/// State files flushed off the event loop: the last content asked for is the one in place,
/// nothing temporary is left behind, and `settle` waits for exactly what was asked before it.
@Suite("State writer")
struct StateWriterTests {
    func temporaryDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "state-writer-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func theLastContentAskedForIsInPlaceAndNoTemporaryIsLeft() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = StateWriter()
        let mark = writer.mark
        for i in 0..<200 {
            try writer.write(Array("version \(i)\n".utf8), to: dir + "/a.json")
            try writer.write(Array("other \(i)\n".utf8), to: dir + "/b.json", mode: 0o644)
        }
        #expect(await writer.settle(after: mark) == nil)
        #expect(try String(contentsOfFile: dir + "/a.json", encoding: .utf8) == "version 199\n")
        #expect(try String(contentsOfFile: dir + "/b.json", encoding: .utf8) == "other 199\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["a.json", "b.json"])
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/b.json")[.posixPermissions] as? Int
        #expect(mode == 0o644)
        #expect(writer.mark == mark + 400)
    }

    @Test func settleReturnsAtOnceWhenNothingIsPending() async throws {
        let writer = StateWriter()
        #expect(await writer.settle() == nil)
    }

    /// A full disk (here: a directory that is not there) fails at once, in the caller,
    /// and nothing is queued.
    @Test func whatCannotBeWrittenFailsInTheCaller() async throws {
        let writer = StateWriter()
        #expect(throws: (any Error).self) { try writer.write([1, 2, 3], to: "/nonexistent-\(UUID().uuidString)/x.json") }
        #expect(writer.mark == 0)
    }
}
