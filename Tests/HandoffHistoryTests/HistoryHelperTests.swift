import HandoffCore
import HandoffHistory
import HandoffControlAPI
import HandoffHistoryProtocol
import Logging
import Testing

/// The helper's request and reply lines, without the process: what handoffd sends is what
/// the helper reads, and a line that is not a request gets an error, not a crash.
@Suite("History helper lines")
struct HistoryHelperTests {
    let t0 = Timestamp(seconds: 1_800_000_000)
    let desk = PeerDevice(id: "DESKDESK-1", name: "desk")

    func offer(_ title: String, document: DocumentReference? = nil) -> ActivitySummary {
        var a = Activity(id: .random(), activityType: "org.example.edit", title: title, webpageURL: "https://example.org/\(title)",
                         keywords: ["kw"], eligibleForSearch: true, createdAt: t0, origin: DeviceRef(name: "desk"))
        if let document { a.userInfo[DocumentReference.userInfoKey] = document.propertyValue }
        return ActivitySummary(a, payloadSize: 10)
    }

    func line(_ r: HistoryHelperRequest) -> [UInt8] { Array(r.json.serialized().utf8) }

    func reply(_ bytes: [UInt8]) throws -> HistoryHelperReply {
        #expect(bytes.last == UInt8(ascii: "\n") && bytes.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") }, "one line")
        return try HistoryHelperReply(json: JSONValue(parsing: Array(bytes.dropLast())))
    }

    @Test func everyRequestSurvivesItsLine() throws {
        let requests: [HistoryHelperRequest] = [
            .record(offer("Plan"), device: desk, local: true, at: t0),
            .search(HistoryQuery(text: "plan", device: "desk", since: t0, limit: 7), at: t0),
            .search(HistoryQuery(), at: t0), .entry(42), .expire(at: t0), .clear, .count,
        ]
        for r in requests { #expect(try HistoryHelperRequest(json: JSONValue(parsing: line(r))) == r) }
    }

    @Test func aWholeExchange() throws {
        let helper = HistoryHelper(database: try HistoryDatabase(inMemory: 30, logger: Logger(label: "test")))
        let ref = DocumentReference(root: SyncedRootID(kind: "syncthing", id: "abcd-1234"), path: "Projects/plan.odt", size: 42,
                                    sha256: [UInt8](repeating: 7, count: 32))
        #expect(try reply(helper.answer(line(.record(offer("Plan", document: ref), device: desk, local: true, at: t0)))) == .ok(.bool(true)))
        guard case .ok(let list) = try reply(helper.answer(line(.search(HistoryQuery(text: "plan"), at: t0)))) else { Issue.record("search failed"); return }
        let entries = try HistoryEntry.list(json: list)
        #expect(entries.map(\.title) == ["Plan"])
        guard case .ok(let value) = try reply(helper.answer(line(.entry(entries[0].id)))) else { Issue.record("entry failed"); return }
        let (entry, document) = try #require(try HistoryHelperReply.entry(json: value))
        #expect(entry == entries[0] && document == ref, "the document reference comes back whole")
        #expect(try reply(helper.answer(line(.entry(9999)))) == .ok(.null))
        #expect(try reply(helper.answer(line(.count))) == .ok(.integer(1)))
        #expect(try reply(helper.answer(line(.clear))) == .ok(.integer(1)))
    }

    @Test func whatIsNotARequestGetsAnErrorReply() throws {
        let helper = HistoryHelper(database: try HistoryDatabase(inMemory: 30, logger: Logger(label: "test")))
        for bad in ["", "not json", "[]", "{}", #"{"op":"drop table"}"#, #"{"op":"entry"}"#, #"{"op":"count","extra":1}"#,
                    #"{"op":"search","query":{"limit":0},"at":1}"#, #"{"op":"record","offer":{},"device":{},"local":true,"at":1}"#] {
            guard case .failed(let code, _) = try reply(helper.answer(Array(bad.utf8))) else { Issue.record("\(bad) was answered"); continue }
            #expect(code == "bad_request")
        }
        #expect(try reply(helper.answer(line(.count))) == .ok(.integer(0)), "and it still answers")
    }
}
