import Foundation
@testable import HandoffDaemon
import NIOConcurrencyHelpers
import HandoffTestSupport
import Testing

/// State files flushed off the event loop: the last change asked for is the one carried out,
/// nothing temporary is left behind, and `settle` waits for the changes it is given.
@Suite("State writer")
struct StateWriterTests {
    static let always = StateWriter.AheadClaim(stands: { true }, take: { true })

    func temporaryDirectory() throws -> String { try makeTemporaryDirectory("state-writer") }

    @Test func theLastContentAskedForIsInPlaceAndNoTemporaryIsLeft() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = StateWriter()
        let tickets = StateWriter.Tickets()
        StateWriter.$requestTickets.withValue(tickets) {
            for i in 0..<200 {
                writer.write(Array("version \(i)\n".utf8), to: dir + "/a.json")
                writer.write(Array("other \(i)\n".utf8), to: dir + "/b.json", mode: 0o644)
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
        StateWriter.$requestTickets.withValue(tickets) {
            writer.write(Array("1".utf8), to: dir + "/gone.json")
            writer.remove(dir + "/gone.json")
            writer.write(Array("1".utf8), to: dir + "/back.json")
            writer.remove(dir + "/back.json")
            writer.write(Array("2".utf8), to: dir + "/back.json")
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

    /// A change that must be refused when it cannot be saved: `prepare` fails in the caller
    /// (here a directory that cannot be made; on a full disk, ENOSPC) and nothing is queued.
    @Test func whatCannotBePreparedFailsInTheCaller() async throws {
        let writer = StateWriter()
        let tickets = StateWriter.Tickets()
        await StateWriter.$requestTickets.withValue(tickets) {
            await #expect(throws: (any Error).self) { _ = try await writer.prepare([1, 2, 3], to: "/dev/null/x.json") }
        }
        #expect(tickets.all.isEmpty)
    }

    /// A change written ahead (issue 43 part 6): in place when the caller hears of it, as
    /// one step in the queue's order, and counted among the request's changes; not put in
    /// place when its claim fails (what it was decided from changed: the caller decides
    /// again); of two decided from the same state, only the first that claims.
    @Test func aChangeWrittenAheadIsInPlaceOnlyIfItsClaimStands() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let queue = DispatchQueue(label: "test.state-writer")
        let writer = StateWriter(queue: queue)
        let path = dir + "/sub/a.json"
        let tickets = StateWriter.Tickets()
        let written = try await StateWriter.$requestTickets.withValue(tickets) { try await writer.writeAhead(Array("ahead".utf8), to: path, claim: Self.always) }
        #expect(written)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "ahead")
        #expect(tickets.all.count == 1)
        #expect(await writer.settle(tickets.all) == nil)

        #expect(try await writer.writeAhead(Array("stale".utf8), to: path, claim: .init(stands: { false }, take: { false })) == false)
        #expect(try await writer.writeAhead(Array("stale".utf8), to: path, claim: .init(stands: { true }, take: { false })) == false)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "ahead")

        // Two decided from the same state, and a write queued behind them, the queue held:
        // the first is put in place, the second's claim fails, and the write (decided
        // later) is not what skips them.
        let version = NIOLockedValueBox<UInt64>(0)
        let claim = StateWriter.AheadClaim(stands: { version.withLockedValue { $0 == 0 } },
                                           take: { version.withLockedValue { v in v == 0 ? { v += 1; return true }() : false } })
        queue.suspend()
        let first = Task { try await writer.writeAhead(Array("first".utf8), to: path, claim: claim) }
        try await eventually("the first to be queued") { writer.pending(path) }
        let second = Task { try await writer.writeAhead(Array("second".utf8), to: path, claim: claim) }
        try await Task.sleep(nanoseconds: 50_000_000)
        writer.write(Array("later".utf8), to: path)
        queue.resume()
        #expect(try await first.value == true)
        #expect(try await second.value == false)
        await writer.settleAll()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "later")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/sub") == ["a.json"])
        #expect(writer.lastFailure == nil)
    }

    /// A change whose file cannot be written ahead is refused in the caller, and what is
    /// known of the file stays as it was: here an earlier flush that failed, whose content
    /// (not the refused one) is written once the disk takes writes again.
    @Test func aChangeRefusedAheadLeavesTheFileAndItsFailureAsTheyWere() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = StateWriter()
        // A file where the directory should be: writing under it fails.
        #expect(FileManager.default.createFile(atPath: dir + "/sub", contents: Data()))
        let path = dir + "/sub/a.json"
        let tickets = StateWriter.Tickets()
        StateWriter.$requestTickets.withValue(tickets) { writer.write(Array("kept".utf8), to: path) }
        #expect(await writer.settle(tickets.all) != nil)
        #expect(writer.flushFailed(path))

        let refused = StateWriter.Tickets()
        await StateWriter.$requestTickets.withValue(refused) {
            await #expect(throws: (any Error).self) { _ = try await writer.writeAhead(Array("refused".utf8), to: path, claim: Self.always) }
        }
        #expect(await writer.settle(refused.all) == nil, "the refusal is the caller's error, not the request's flush")
        #expect(writer.flushFailed(path), "still behind memory")

        try FileManager.default.removeItem(atPath: dir + "/sub")
        let later = StateWriter.Tickets()
        StateWriter.$requestTickets.withValue(later) { writer.write(Array("other".utf8), to: dir + "/b.json") }
        #expect(await writer.settle(later.all) == nil)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "kept")
        #expect(!writer.flushFailed(path))
    }

    /// A queued write that cannot be carried out is reported to the request that asked.
    @Test func aQueuedWriteThatFailsIsReportedBySettle() async throws {
        let writer = StateWriter()
        let tickets = StateWriter.Tickets()
        StateWriter.$requestTickets.withValue(tickets) { writer.write([1, 2, 3], to: "/dev/null/x.json") }
        let failure = await writer.settle(tickets.all)
        #expect(failure?.contains("/dev/null") == true, "\(String(describing: failure))")
        #expect(writer.flushFailed("/dev/null/x.json"))
    }

    /// Prepared contents take their place in the queue when committed, not when prepared;
    /// a discarded one leaves nothing behind; a missing directory is made.
    @Test func aPreparedContentIsOrderedByItsCommit() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = StateWriter()
        let path = dir + "/sub/a.json"
        let tickets = StateWriter.Tickets()
        try await StateWriter.$requestTickets.withValue(tickets) {
            let prepared = try await writer.prepare(Array("prepared".utf8), to: path)
            let dropped = try await writer.prepare(Array("dropped".utf8), to: path)
            writer.write(Array("queued".utf8), to: path)
            writer.commit(prepared)
            writer.discard(dropped)
        }
        #expect(tickets.all.count == 2)
        #expect(await writer.settle(tickets.all) == nil)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "prepared")
        try await eventually("the temporary files to be gone, only a.json left") {
            (try? FileManager.default.contentsOfDirectory(atPath: dir + "/sub")) == ["a.json"]
        }
    }

    /// What could not be saved is written again once the disk takes writes: here after
    /// the next change that succeeds.
    @Test func whatCouldNotBeSavedIsSavedWhenTheDiskTakesWritesAgain() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = StateWriter()
        // A file where the directory should be: writing under it fails.
        #expect(FileManager.default.createFile(atPath: dir + "/sub", contents: Data()))
        let tickets = StateWriter.Tickets()
        StateWriter.$requestTickets.withValue(tickets) { writer.write(Array("kept".utf8), to: dir + "/sub/a.json") }
        #expect(await writer.settle(tickets.all) != nil)
        #expect(writer.flushFailed(dir + "/sub/a.json"))
        try FileManager.default.removeItem(atPath: dir + "/sub")
        let later = StateWriter.Tickets()
        StateWriter.$requestTickets.withValue(later) { writer.write(Array("other".utf8), to: dir + "/b.json") }
        #expect(await writer.settle(later.all) == nil)
        #expect(try String(contentsOfFile: dir + "/sub/a.json", encoding: .utf8) == "kept")
        #expect(!writer.flushFailed(dir + "/sub/a.json") && writer.lastFailure == nil)
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
        StateWriter.$requestTickets.withValue(tickets) { writer.write(Array("1".utf8), to: dir + "/x.json") }
        let failure = await writer.settle(tickets.all)
        #expect(failure?.contains("cannot rename") == true, "\(String(describing: failure))")
        #expect(writer.flushFailed(dir + "/x.json"))
        #expect(writer.lastFailure?.path == dir + "/x.json")
        try FileManager.default.removeItem(atPath: dir + "/x.json")
        let again = StateWriter.Tickets()
        StateWriter.$requestTickets.withValue(again) { writer.write(Array("2".utf8), to: dir + "/x.json") }
        #expect(await writer.settle(again.all) == nil)
        #expect(!writer.flushFailed(dir + "/x.json") && writer.lastFailure == nil)
    }
}
