import Foundation
@testable import HandoffDaemon
import Testing

/// State files flushed off the event loop: the last change asked for is the one carried out,
/// nothing temporary is left behind, and `settle` waits for the changes it is given.
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
        let tickets = StateWriter.Tickets()
        try StateWriter.$requestTickets.withValue(tickets) {
            for i in 0..<200 {
                try writer.write(Array("version \(i)\n".utf8), to: dir + "/a.json")
                try writer.write(Array("other \(i)\n".utf8), to: dir + "/b.json", mode: 0o644)
            }
        }
        #expect(tickets.all.count == 400)
        // The first change is carried out by itself, or by a newer one if it was superseded
        // while queued: either way it is in place once settled.
        #expect(await writer.settle([tickets.all[0]]) == nil)
        #expect(try String(contentsOfFile: dir + "/a.json", encoding: .utf8).hasPrefix("version "))
        #expect(await writer.settle(tickets.all) == nil)
        #expect(try String(contentsOfFile: dir + "/a.json", encoding: .utf8) == "version 199\n")
        #expect(try String(contentsOfFile: dir + "/b.json", encoding: .utf8) == "other 199\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["a.json", "b.json"])
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/b.json")[.posixPermissions] as? Int
        #expect(mode == 0o644)
        #expect(!writer.flushFailed(dir + "/a.json") && writer.lastFailure == nil)
    }

    /// A removal waits for the writes of the same file before it, which would otherwise
    /// put the file back; a write after it brings the file back.
    @Test func aRemovalIsOrderedWithTheWritesOfItsFile() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = StateWriter()
        let tickets = StateWriter.Tickets()
        try StateWriter.$requestTickets.withValue(tickets) {
            try writer.write(Array("1".utf8), to: dir + "/gone.json")
            writer.remove(dir + "/gone.json")
            try writer.write(Array("1".utf8), to: dir + "/back.json")
            writer.remove(dir + "/back.json")
            try writer.write(Array("2".utf8), to: dir + "/back.json")
        }
        #expect(await writer.settle(tickets.all) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["back.json"])
        #expect(try String(contentsOfFile: dir + "/back.json", encoding: .utf8) == "2")
    }

    @Test func settleReturnsAtOnceForNoChanges() async throws {
        let writer = StateWriter()
        #expect(await writer.settle([]) == nil)
        await writer.settleAll()
    }

    /// A full disk (here: a directory that is not there) fails at once, in the caller,
    /// and nothing is queued.
    @Test func whatCannotBeWrittenFailsInTheCaller() async throws {
        let writer = StateWriter()
        let tickets = StateWriter.Tickets()
        StateWriter.$requestTickets.withValue(tickets) {
            #expect(throws: (any Error).self) { try writer.write([1, 2, 3], to: "/nonexistent-\(UUID().uuidString)/x.json") }
        }
        #expect(tickets.all.isEmpty)
    }

    /// A flush that fails is reported to the request that made the change, and the file is
    /// known to lag memory until a later change of it is flushed.
    @Test func aFailedFlushIsReportedAndRemembered() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = StateWriter()
        // A directory where the file should be: the rename over it fails.
        try FileManager.default.createDirectory(atPath: dir + "/x.json/inside", withIntermediateDirectories: true)
        let tickets = StateWriter.Tickets()
        try StateWriter.$requestTickets.withValue(tickets) { try writer.write(Array("1".utf8), to: dir + "/x.json") }
        let failure = await writer.settle(tickets.all)
        #expect(failure?.contains("cannot rename") == true, "\(String(describing: failure))")
        #expect(writer.flushFailed(dir + "/x.json"))
        #expect(writer.lastFailure?.path == dir + "/x.json")
        try FileManager.default.removeItem(atPath: dir + "/x.json")
        let again = StateWriter.Tickets()
        try StateWriter.$requestTickets.withValue(again) { try writer.write(Array("2".utf8), to: dir + "/x.json") }
        #expect(await writer.settle(again.all) == nil)
        #expect(!writer.flushFailed(dir + "/x.json") && writer.lastFailure == nil)
    }
}
