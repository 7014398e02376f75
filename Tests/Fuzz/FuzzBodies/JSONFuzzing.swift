import HandoffCore
#if canImport(Glibc)
import Glibc
#endif
import HandoffControlAPI
import HandoffHistoryProtocol

/// Everything JSON the local API and the files on disk give handoff: strict parsing, then
/// every decoder that takes an object (activities, drafts, updates, typed userInfo, the
/// history query, listings). A crash, a hang or an unbounded allocation is a bug; a thrown
/// error is the expected answer to bad input. What parses must print and parse back the same.
public enum JSONFuzzing {
    /// One input: a broken invariant is reported through `fuzzCheck` (a crash under libFuzzer).
    public static func test(_ bytes: [UInt8]) {
        guard let value = try? JSONValue(parsing: bytes) else { return }
        let again = try? JSONValue(parsing: Array(value.serialized().utf8))
        fuzzCheck(again == value, "JSON does not survive printing and parsing again")
        if let o = value.objectValue {
            _ = try? ActivityJSON.decodeDraft(o, extraFields: ["session", "streamFile", "document"])
            _ = try? ActivityJSON.decodeUpdate(o)
            if let a = try? ActivityJSON.decodeActivity(o) {
                fuzzCheck((try? ActivityJSON.decodeActivity(ActivityJSON.encode(a))) == a, "an activity does not survive its own JSON")
            }
            _ = try? TypedJSON.decode(dictionary: o, path: "userInfo")
            _ = try? HistoryQuery(json: o)
            _ = try? ActivitySummary(json: o)
            _ = try? SearchFields(json: o)
        }
        _ = try? TypedJSON.decode(value, path: "v")
        _ = try? ActivityRecord(json: value)
        _ = try? ControlEvent(json: value)
        _ = try? DaemonStatus(json: value)
        _ = try? LaunchOutcome(json: value)
        _ = try? PairingStatus(json: value)
        _ = try? HistoryEntry.list(json: value)
        _ = try? DiagnosticCheck.list(json: value)
        _ = try? Offer.list(json: value)
        _ = PeerInfo.list(json: value)
        _ = AccountDevices(json: value)
        _ = try? ContinuedActivity(json: value)
        // Between handoffd and its history helper: what parses must print and parse back the same.
        if let r = try? HistoryHelperRequest(json: value) {
            fuzzCheck((try? HistoryHelperRequest(json: r.json)) == r, "a history helper request does not survive its own line")
        }
        if let r = try? HistoryHelperReply(json: value) {
            fuzzCheck((try? HistoryHelperReply(json: r.json)) == r, "a history helper reply does not survive its own line")
            if case .ok(let v) = r { _ = try? HistoryHelperReply.entry(json: v) }
        }
    }

    /// Valid inputs made by the real encoders: the seed corpus (`TARGET --write-seeds DIR`).
    public static func seeds() -> [[UInt8]] {
        let a = FuzzSeeds.activity()
        var out: [[UInt8]] = [JSONValue.object(ActivityJSON.encode(a)).serialized(), #"{"activityType":"com.example.x","title":"T","userInfo":{"d":{"$date":"2026-01-01T00:00:00Z"},"b":{"$data":"AAE="},"s":{"$set":[1,2]},"u":{"$url":"https://x.org"}},"keywords":["k"],"eligibleForSearch":true,"searchableUserInfoKeys":["d"]}"#,
                   #"{"title":"new","userInfoMode":"replace","userInfo":{},"removeUserInfoKeys":["a"],"webpageURL":null}"#,
                   #"{"query":"rep fin","device":"desk","since":"2026-11-01T00:00:00Z","limit":5}"#,
                   #"{"event":"will-continue","activityType":"com.example.x","device":{"id":"A","name":"b"}}"#,
                   #"[1,-2.5e3,"\u00e9\ud83d\ude00",true,null,{"a":[]}]"#].map { Array($0.utf8) }
        out.append(Array(ActivityRecord(activity: a, state: .current, owner: "session", payloadSize: 10).json.serialized().utf8))
        let device = PeerDevice(id: "ABC", name: "desk")
        out.append(Array(HistoryHelperRequest.record(ActivitySummary(a, payloadSize: 10), device: device, local: true,
                                                     at: Timestamp(seconds: 1_800_000_000)).json.serialized().utf8))
        out.append(Array(HistoryHelperRequest.search(HistoryQuery(text: "plan", limit: 5), at: Timestamp(seconds: 1_800_000_000)).json.serialized().utf8))
        let entry = HistoryEntry(id: 3, activityID: a.id.rawValue, activityType: a.activityType, title: a.title, keywords: ["notes"],
                                 webpageURL: a.webpageURL, documentPath: "Projects/plan.odt", device: device, local: true,
                                 firstSeen: a.createdAt, lastSeen: a.createdAt)
        out.append(Array(HistoryHelperReply.ok(HistoryHelperReply.entryJSON(entry, document: FuzzSeeds.document())).json.serialized().utf8))
        out.append(Array(HistoryHelperReply.failed(code: "bad_request", message: "no").json.serialized().utf8))
        return out
    }
}
