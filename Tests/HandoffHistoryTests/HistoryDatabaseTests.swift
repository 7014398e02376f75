import HandoffHistory
import HandoffCore
import HandoffControlAPI
import Logging
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The history store (in the helper process) on an in-memory SQLite database: what it
/// keeps, what it finds.
@Suite("History database")
struct HistoryDatabaseTests {
    let desk = PeerDevice(id: "DESKDESK-1", name: "desk")
    let laptop = PeerDevice(id: "LAPLAP-2", name: "laptop")
    let t0 = Timestamp(seconds: 1_800_000_000)

    func offer(_ title: String, search: Bool = true, keywords: [String] = [], info: UserInfo = [:], searchable: [String] = [],
               url: String? = nil, id: ActivityID = .random()) -> ActivitySummary {
        var a = Activity(id: id, activityType: "org.example.edit", title: title, userInfo: info, webpageURL: url, keywords: keywords,
                         eligibleForSearch: search, createdAt: t0, origin: DeviceRef(name: "desk"))
        a.searchableUserInfoKeys = searchable
        return ActivitySummary(a, payloadSize: 10)
    }

    func history() throws -> HistoryDatabase { try HistoryDatabase(inMemory: 30, logger: Logger(label: "test")) }

    @Test func onlyWhatTheAppAllowsIsKept() async throws {
        let h = try history()
        h.record(offer("Kept", keywords: ["finance"], info: ["client": .string("Acme"), "secret": .string("zebra")], searchable: ["client"]),
                       device: desk, local: true, at: t0)
        h.record(offer("Not searchable", search: false), device: desk, local: true, at: t0)
        #expect(try h.count() == 1)
        func titles(_ q: String) async throws -> [String] { try h.search(HistoryQuery(text: q), at: t0).map(\.title) }
        #expect(try await titles("acme") == ["Kept"], "an opted-in userInfo value")
        #expect(try await titles("zebra") == [], "userInfo not opted in is not indexed")
        #expect(try await titles("fin") == ["Kept"], "keywords, as prefixes")
        #expect(try await titles("kept finance") == ["Kept"], "all words")
        #expect(try await titles("kept zebra") == [])
        #expect(try await titles("searchable") == [])
    }

    @Test func newestFirstAndSeeingAgainMovesUpKeepingTheID() async throws {
        let h = try history()
        let first = ActivityID.random()
        h.record(offer("Report one", id: first), device: desk, local: true, at: t0)
        h.record(offer("Report two"), device: laptop, local: false, at: t0.adding(nanoseconds: 60_000_000_000))
        var found = try h.search(HistoryQuery(text: "report"), at: t0.adding(nanoseconds: 120_000_000_000))
        #expect(found.map(\.title) == ["Report two", "Report one"])
        let idOne = found[1].id
        // Seen again (renamed): newest, same entry number.
        h.record(offer("Report one, revised", id: first), device: desk, local: true, at: t0.adding(nanoseconds: 120_000_000_000))
        found = try h.search(HistoryQuery(text: "report"), at: t0.adding(nanoseconds: 120_000_000_000))
        #expect(found.map(\.title) == ["Report one, revised", "Report two"])
        #expect(found[0].id == idOne && found[0].firstSeen == t0)
        #expect(try h.search(HistoryQuery(text: "revised"), at: t0).count == 1, "the index follows the update")
        #expect(try h.count() == 2)
    }

    @Test func filtersByDeviceTimeAndLimit() async throws {
        let h = try history()
        for i in 0..<5 {
            h.record(offer("Note \(i)"), device: i % 2 == 0 ? desk : laptop, local: i % 2 == 0, at: t0.adding(nanoseconds: Int64(i) * 3_600_000_000_000))
        }
        let now = t0.adding(nanoseconds: 5 * 3_600_000_000_000)
        #expect(try h.search(HistoryQuery(text: "note", device: "LAPTOP"), at: now).map(\.title) == ["Note 3", "Note 1"])
        #expect(try h.search(HistoryQuery(text: "note", device: "deskdesk"), at: now).count == 3, "an ID prefix")
        #expect(try h.search(HistoryQuery(text: "note", device: "nobody"), at: now).isEmpty)
        #expect(try h.search(HistoryQuery(since: t0.adding(nanoseconds: 3 * 3_600_000_000_000)), at: now).map(\.title) == ["Note 4", "Note 3"])
        #expect(try h.search(HistoryQuery(limit: 2), at: now).count == 2)
        // Operators are words, not FTS5 syntax; punctuation alone matches nothing.
        #expect(try h.search(HistoryQuery(text: "note OR \"x"), at: now).isEmpty)
        #expect(try h.search(HistoryQuery(text: "*(){}"), at: now).count == 5, "no words: no text filter")
    }

    @Test func retentionAndClear() async throws {
        let h = try history()
        h.record(offer("Old"), device: desk, local: true, at: t0)
        h.record(offer("New"), device: desk, local: true, at: t0.adding(nanoseconds: 31 * 86_400 * 1_000_000_000))
        let now = t0.adding(nanoseconds: 31 * 86_400 * 1_000_000_000)
        #expect(try h.search(HistoryQuery(), at: now).map(\.title) == ["New"], "past the retention is not shown")
        #expect(h.expire(at: now) == 1)
        #expect(try h.count() == 1)
        #expect(try h.clear() == 1)
        #expect(try h.search(HistoryQuery(), at: now).isEmpty)
    }

    /// An origin deletes its saved activities by persistent identifier, or all of them;
    /// another origin's entries, even with the same identifier, stay.
    @Test func anOriginForgetsItsOwnByPersistentIdentifier() async throws {
        let h = try history()
        func offer(_ title: String, persistent: String?) -> ActivitySummary {
            var a = Activity(id: .random(), activityType: "org.example.edit", title: title, eligibleForSearch: true, createdAt: t0, origin: DeviceRef(name: "x"))
            a.persistentIdentifier = persistent
            return ActivitySummary(a, payloadSize: 10)
        }
        h.record(offer("Desk 42", persistent: "note/42"), device: desk, local: true, at: t0)
        h.record(offer("Desk 43", persistent: "note/43"), device: desk, local: true, at: t0)
        h.record(offer("Desk none", persistent: nil), device: desk, local: true, at: t0)
        h.record(offer("Laptop 42", persistent: "note/42"), device: laptop, local: false, at: t0)
        func titles() throws -> Set<String> { Set(try h.search(HistoryQuery(), at: t0).map(\.title)) }
        #expect(try h.forget(device: desk.id, identifiers: ["note/42", "note/42", "note/99"]) == 1)
        #expect(try titles() == ["Desk 43", "Desk none", "Laptop 42"])
        #expect(try h.forget(device: desk.id, identifiers: nil) == 2)
        #expect(try titles() == ["Laptop 42"])
    }

    @Test func aDocumentIsKeptToReopen() async throws {
        let h = try history()
        let ref = DocumentReference(root: SyncedRootID(kind: "syncthing", id: "abcd-1234"), path: "Projects/plan.odt", size: 42, sha256: [UInt8](repeating: 7, count: 32))
        h.record(offer("Plan", info: [DocumentReference.userInfoKey: ref.propertyValue]), device: laptop, local: false, at: t0)
        let found = try #require(try h.search(HistoryQuery(text: "plan"), at: t0).first)
        #expect(found.documentPath == "Projects/plan.odt")
        let (entry, document) = try #require(try h.entry(found.id))
        #expect(entry == found && document == ref)
        #expect(try h.search(HistoryQuery(text: "projects"), at: t0).count == 1, "the document path is searchable")
    }

    @Test func anUnreadableFileIsKeptAsideAndANewHistoryStarts() async throws {
        let dir = "/tmp/hhist-\(UInt32.random(in: 0...UInt32.max))"
        #expect(mkdir(dir, 0o700) == 0)
        defer { for f in try! listDirectory(dir) where f != "." && f != ".." { _ = unlink("\(dir)/\(f)") }; rmdir(dir) }
        let f = try #require(fopen("\(dir)/history.sqlite", "w"))
        fputs("this is not a database, but it is long enough to look like a header", f)
        fclose(f)
        let h = try HistoryDatabase(directory: dir, retentionDays: 30, logger: Logger(label: "test"))
        h.record(offer("After"), device: desk, local: true)
        #expect(try h.count() == 1)
        let names = try listDirectory(dir)
        #expect(names.contains { $0.hasPrefix("history.sqlite.unreadable-") }, "\(names)")
    }
}

private func listDirectory(_ path: String) throws -> [String] {
    guard let d = opendir(path) else { return [] }
    defer { closedir(d) }
    var out: [String] = []
    while let e = readdir(d) {
        out.append(withUnsafePointer(to: e.pointee.d_name) { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) })
    }
    return out
}
