import HandoffControlAPI
import HandoffCore
@testable import HandoffDesktop
import Testing

@Suite("Shell search")
struct ShellSearchTests {
    let now = Timestamp(seconds: 1_800_000_000)

    func offer(_ title: String, searchable: Bool = true, keywords: [String] = [], device: String = "laptop", age: Double = 0) -> Presence.Offer {
        let a = Activity(id: .random(), activityType: "org.example.report", title: title, keywords: keywords, eligibleForSearch: searchable,
                         createdAt: now, origin: DeviceRef(name: device, id: "DEV"))
        return Presence.Offer(device: PeerDevice(id: "DEV", name: device), activity: ActivitySummary(a, payloadSize: 1),
                              offeredAt: now.adding(nanoseconds: -Int64(age * 1e9)))
    }

    @Test func termsAreLowercasedSplitAndBounded() {
        #expect(ShellSearch.terms(["Quarterly", "REP"]) == ["quarterly", "rep"])
        #expect(ShellSearch.terms(["quarterly rep  "]) == ["quarterly", "rep"], "KRunner sends one string")
        #expect(ShellSearch.terms(["", "  "]).isEmpty)
        let many = ShellSearch.terms((0..<1000).map { "t\($0)" })
        #expect(many.count == ShellSearch.maximumTerms)
        let huge = ShellSearch.terms([String(repeating: "a", count: 1_000_000)])
        #expect(huge == [String(repeating: "a", count: ShellSearch.maximumTermLength)])
        let spaced = ShellSearch.terms([String(repeating: "ab ", count: 400_000)])
        #expect(spaced == ["ab"], "repeats go")
        #expect(ShellSearch.terms(["re", "report", "bud", "REPORT", "b"]) == ["report", "bud"], "a term that begins another asks nothing more")
        #expect(ShellSearch.historyQuery(["q", "report"]) == "report")
        #expect(ShellSearch.historyQuery(["q"]) == nil, "one letter narrows nothing")
        #expect(ShellSearch.historyQuery(["--", "!!"]) == nil, "punctuation would ask the history for everything")
        #expect(ShellSearch.terms(["a" + String(repeating: "\u{0301}", count: 30_000)]) == ["a"])
    }

    @Test func onlyWhatIsEligibleForSearchIsFoundByEveryTerm() {
        var p = Presence()
        p.offers = [offer("Quarterly report", keywords: ["finance"]), offer("Secret plan", searchable: false), offer("Holiday photos")]
        #expect(ShellSearch.offers(p, ["quart"]).map(\.title) == ["Quarterly report"])
        #expect(ShellSearch.offers(p, ["fin", "rep"]).map(\.title) == ["Quarterly report"], "keywords count, every term must match")
        #expect(ShellSearch.offers(p, ["fin", "photos"]).isEmpty)
        #expect(ShellSearch.offers(p, ["secret"]).isEmpty, "not eligible for search")
        #expect(ShellSearch.offers(p, ["lap"]).count == 2, "the workstation's name is found too")
        #expect(ShellSearch.offers(p, []).isEmpty)
        #expect(ShellSearch.offers(p, ["eport"]).isEmpty, "words match from their start")
    }

    @Test func resultIdsReadBackAndNothingElseDoes() {
        let o = ShellSearch.Result.offer(deviceID: "ABCDEFG-123", activityID: ActivityID.random().rawValue)
        #expect(ShellSearch.Result(id: o.id) == o)
        #expect(ShellSearch.Result(id: "history/42") == .history(42))
        for bad in ["", "history/-1", "history/x", "offer//x", "offer/D/not-an-id", "offer/D", "other/1", String(repeating: "h", count: 5000)] {
            #expect(ShellSearch.Result(id: bad) == nil, "\(bad.prefix(20))")
        }
    }

    @Test func metasSayWhereAndWhen() {
        let m = ShellSearch.meta(offer("Quarterly report", age: 300), at: now)
        #expect(m.name == "Quarterly report")
        #expect(m.description == "Continue from laptop, 5 min ago")
        let e = HistoryEntry(id: 7, activityID: ActivityID.random().rawValue, activityType: "t", title: "Old page", keywords: [],
                             webpageURL: "https://example.org", documentPath: nil, device: PeerDevice(id: "D", name: "desk"), local: false,
                             firstSeen: now, lastSeen: now.adding(nanoseconds: -2 * 86_400_000_000_000))
        let h = ShellSearch.meta(e, at: now)
        #expect(h.result == .history(7))
        #expect(h.description == "Seen on desk 2 days ago: open its page again")
        #expect(ShellSearch.ago(now, now) == "just now" && ShellSearch.ago(now.adding(nanoseconds: -86_400_000_000_000), now) == "yesterday")
    }
}

@Suite("Answering within a deadline")
struct WithinTests {
    /// A search answers with what is ready: work that does not finish in time is left
    /// to finish unheard, and the answer comes anyway.
    @Test func workThatNeverEndsInTimeIsNotWaitedFor() async {
        let late = await SessionAgent.within(50_000_000) { () -> Int in
            try? await LoopSleep.sleep(nanoseconds: 60_000_000_000)
            return 1
        }
        #expect(late == nil)
        let quick = await SessionAgent.within(5_000_000_000) { 2 }
        #expect(quick == 2)
    }
}
