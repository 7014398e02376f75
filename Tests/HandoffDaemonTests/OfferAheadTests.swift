import Dispatch
import Foundation
import HandoffCore
import HandoffControlAPI
import HandoffTestSupport
import Logging
import Testing
@testable import HandoffDaemon

/// A daemon-owned activity is offered to peers before its durable write, not after it
/// (issue 43 part 6), and the full-disk promise stands: a change that cannot be written is
/// refused, nothing changes, and what peers were offered ahead is withdrawn. A real state
/// file on disk; the writer's queue held by the test to see the moment between.
@Suite("Offer ahead of the disk", .timeLimit(.minutes(1)))
struct OfferAheadTests {
    static func registry(_ directory: String, _ writer: StateWriter) -> ActivityRegistry {
        ActivityRegistry(settings: .init(device: DeviceRef(name: "desk", id: nil)),
                         store: ActivityStore(stateDirectory: directory, writer: writer), logger: Logger(label: "test"))
    }

    func temporaryDirectory() throws -> String { try makeTemporaryDirectory("offer-ahead") }

    @Test func peersAreOfferedTheActivityWhileItsWriteWaits() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let queue = DispatchQueue(label: "test.state-writer")
        let writer = StateWriter(queue: queue)
        let registry = Self.registry(dir, writer)
        var offers = await registry.watchOffer().makeAsyncIterator()
        #expect(await offers.next() == .some(nil), "nothing offered at first")

        queue.suspend()
        var draft = ActivityDraft(activityType: "org.example.page")
        draft.title = "Offered before it is written"
        draft.userInfo = ["url": .string("https://example.org/")]
        let page = draft
        let made = Task { try await registry.becomeCurrent(page, session: nil) }
        // Offered while the disk has not been touched.
        let offered = try #require(await offers.next() ?? nil)
        #expect(offered.summary.title == draft.title)
        #expect(!FileManager.default.fileExists(atPath: dir + "/activities.json"))
        // A peer that fetches it now is served it, and its streams' source is known.
        let fetched = try await registry.snapshotForPeer(offered.id)
        #expect(fetched.activity.userInfo["url"] == .string("https://example.org/") && fetched.state == .current)
        #expect(await registry.all().isEmpty, "not made here until it is written")

        queue.resume()
        let record = try await made.value
        #expect(record.activity.id == offered.id)
        #expect(try String(contentsOfFile: dir + "/activities.json", encoding: .utf8).contains(offered.id.rawValue))
        let (last, ahead) = await (registry.lastOffer, registry.offeredAhead)
        #expect(last == offered && ahead.isEmpty)
        // The next change's offer is the next thing peers hear: the one ahead was not
        // withdrawn and offered again when it was made.
        _ = try await registry.resign(record.activity.id.rawValue)
        #expect(await offers.next() == .some(nil))
    }

    /// Many changes at once, each decided from a state that the others leave behind: each
    /// lands (claims that fail are decided again), and what is on disk once they are
    /// answered is what the table holds, round after round.
    @Test func changesAtOnceLandAsTheTableHasThem() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = StateWriter()
        let registry = Self.registry(dir, writer)
        let base = try await registry.becomeCurrent(ActivityDraft(activityType: "org.example.base"), session: nil)
        let id = base.activity.id.rawValue
        for round in 0..<25 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<6 {
                    group.addTask { _ = try await registry.becomeCurrent(ActivityDraft(activityType: "org.example.r\(round)-\(i)"), session: nil) }
                    group.addTask {
                        var change = ActivityUpdate()
                        change.title = "round \(round), \(i)"
                        _ = try await registry.update(id, change)
                    }
                }
                group.addTask { _ = try await registry.becomeCurrent(existing: id) }
                try await group.waitForAll()
            }
            await writer.settleAll()
            let onDisk = ActivityStore(stateDirectory: dir, writer: writer).load(logger: Logger(label: "test"))
            let inMemory = await registry.table.saved
            #expect(onDisk == inMemory, "round \(round)")
            #expect(inMemory.activities.filter(\.current).count == 1)
            #expect(inMemory.activities.contains { $0.activity.id.rawValue == id && $0.activity.title.hasPrefix("round \(round),") })
        }
        let ahead = await registry.offeredAhead
        #expect(ahead.isEmpty && writer.lastFailure == nil)
    }

    @Test func aChangeRefusedForTheDiskIsWithdrawnFromPeers() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let queue = DispatchQueue(label: "test.state-writer")
        let writer = StateWriter(queue: queue)
        let registry = Self.registry(dir + "/state", writer)
        var offers = await registry.watchOffer().makeAsyncIterator()
        _ = await offers.next()
        let kept = try await registry.becomeCurrent(ActivityDraft(activityType: "org.example.kept"), session: nil)
        #expect(await offers.next()??.id == kept.activity.id)

        // The state directory becomes a file: the temporary file cannot be written, as on a
        // full disk.
        try FileManager.default.removeItem(atPath: dir + "/state")
        #expect(FileManager.default.createFile(atPath: dir + "/state", contents: Data()))
        queue.suspend()
        let lost = Task { try await registry.becomeCurrent(ActivityDraft(activityType: "org.example.lost"), session: nil) }
        // Peers hear of it ahead...
        let ahead = try #require(await offers.next() ?? nil)
        #expect(ahead.summary.activityType == "org.example.lost")
        queue.resume()
        // ...then the write fails: refused, and withdrawn from peers; here nothing changed.
        await #expect(throws: HandoffError.self) { _ = try await lost.value }
        #expect(await offers.next()??.id == kept.activity.id)
        #expect(await registry.current?.activity.id == kept.activity.id)
        #expect(await registry.all().map(\.activity.id) == [kept.activity.id])
        let stillAhead = await registry.offeredAhead
        #expect(stillAhead.isEmpty)
        await #expect(throws: HandoffError.self) { _ = try await registry.snapshotForPeer(ahead.id) }
    }
}
