import HandoffCore
import HandoffControlAPI
import Testing
@testable import HandoffDaemon

/// The registry's decisions as values: no actor, no clock, no sockets.
@Suite("Activity table")
struct ActivityTableTests {
    static let t0 = Timestamp(seconds: 1_800_000_000, nanoseconds: 0)

    static func entry(_ title: String, owner: ActivityOwner = .daemon, updated: Int64 = 0, expires: Int64? = nil) -> ActivityTable.Entry {
        var draft = ActivityDraft(activityType: "org.example.t")
        draft.title = title
        draft.expirationDate = expires.map { t0.adding(nanoseconds: $0 * 1_000_000_000) }
        let a = draft.makeActivity(id: .random(), now: t0.adding(nanoseconds: updated * 1_000_000_000), origin: DeviceRef(name: "desk", id: nil))
        return .init(activity: a, state: .resigned, owner: owner)
    }

    static func names(_ events: [ControlEvent]) -> [String] {
        events.map { e in
            switch e {
            case .becameCurrent(let r): "became-current \(r.activity.title)"
            case .resigned(let r): "resigned \(r.activity.title)"
            case .updated(let r): "updated \(r.activity.title)"
            case .expired(let r): "expired \(r.activity.title)"
            case .invalidated(let r, let reason): "invalidated \(r.activity.title) \(reason)"
            default: e.name
            }
        }
    }

    @Test func aNewActivityDisplacesTheCurrentOne() {
        var t = ActivityTable()
        let a = Self.entry("a"), b = Self.entry("b")
        #expect(Self.names(t.add(a).events) == ["became-current a"])
        #expect(Self.names(t.add(b).events) == ["resigned a", "became-current b"])
        #expect(t.currentID == b.activity.id && t.entries[a.activity.id]?.state == .resigned)
        #expect(Self.names(t.becomeCurrent(a.activity.id).events) == ["resigned b", "became-current a"])
        #expect(t.becomeCurrent(a.activity.id).events.isEmpty, "already current: nothing happens")
        #expect(Self.names(t.resign(a.activity.id).events) == ["resigned a"] && t.currentID == nil)
        #expect(t.resign(a.activity.id).events.isEmpty)
    }

    @Test func invalidationIsFinalAndRemembered() throws {
        var t = ActivityTable(rememberedFinalActivities: 2)
        let es = (0..<3).map { Self.entry("e\($0)") }
        for e in es { _ = t.add(e) }
        let out = t.invalidate(es[2].activity.id)
        #expect(Self.names(out.events) == ["invalidated e2 invalidated"] && out.ended.map(\.state) == [.invalidated] && t.currentID == nil)
        #expect(t.invalidate(es[2].activity.id).events.isEmpty, "once")
        #expect(throws: HandoffError.invalidated(es[2].activity.id)) { try t.entry(es[2].activity.id.rawValue, allowFinal: false) }
        #expect(try t.entry(es[2].activity.id.rawValue, allowFinal: true).state == .invalidated)
        _ = t.invalidate(es[0].activity.id)
        _ = t.invalidate(es[1].activity.id)
        #expect(t.entries[es[2].activity.id] == nil, "beyond the remembered ids, the oldest final one is forgotten")
        #expect(throws: HandoffError.self) { try t.entry(es[2].activity.id.rawValue, allowFinal: true) }
    }

    @Test func anOwnerBeyondItsCapLosesItsOldestNonCurrentActivity() {
        var t = ActivityTable(maximumActivitiesPerOwner: 3)
        let app = ActivityOwner.session("s")
        let es = (0..<3).map { Self.entry("e\($0)", owner: app, updated: Int64($0)) }
        for e in es { _ = t.add(e) }
        _ = t.add(Self.entry("other", owner: .daemon, updated: 10))
        let out = t.add(Self.entry("e3", owner: app, updated: 3))
        #expect(Self.names(out.events) == ["invalidated e0 evicted", "resigned other", "became-current e3"])
        #expect(t.live.filter { $0.owner == app }.count == 3)
    }

    @Test func expiryEndsWhatIsDueAndNothingElse() {
        var t = ActivityTable()
        let soon = Self.entry("soon", expires: 60), later = Self.entry("later", expires: 120), never = Self.entry("never")
        for e in [soon, later, never] { _ = t.add(e) }
        #expect(t.nextExpiry == Self.t0.adding(nanoseconds: 60_000_000_000))
        #expect(t.expire(at: Self.t0.adding(nanoseconds: 59_999_999_999)).events.isEmpty)
        #expect(Self.names(t.expire(at: Self.t0.adding(nanoseconds: 60_000_000_000)).events) == ["expired soon"])
        #expect(t.nextExpiry == Self.t0.adding(nanoseconds: 120_000_000_000))
        #expect(t.offer(at: Self.t0)?.summary.title == "never", "the current one is offered")
        #expect(Self.names(t.expire(at: Self.t0.adding(nanoseconds: 1_000_000_000_000)).events) == ["expired later"])
        #expect(t.nextExpiry == nil)
    }

    @Test func anUpdateThatIsAlreadyPastExpiresAtOnce() {
        var t = ActivityTable()
        let e = Self.entry("a", expires: 60)
        _ = t.add(e)
        var changed = e.activity
        changed.title = "b"
        let out = t.update(e.activity.id, to: changed, at: Self.t0.adding(nanoseconds: 61_000_000_000))
        #expect(Self.names(out.events) == ["updated b", "expired b"] && out.ended.map(\.state) == [.expired])
        #expect(t.offer(at: Self.t0) == nil)
    }

    @Test func aSessionsActivitiesEndWithIt() {
        var t = ActivityTable()
        for (n, owner) in [("a", ActivityOwner.session("s")), ("b", .session("s")), ("c", .session("other"))] { _ = t.add(Self.entry(n, owner: owner)) }
        let out = t.sessionEnded("s")
        #expect(out.ended.count == 2 && out.events.allSatisfy { if case .invalidated(_, "owner-session-ended") = $0 { true } else { false } })
        #expect(t.live.map(\.activity.title) == ["c"])
    }

    @Test func onlyTheDaemonsLiveActivitiesAreSaved() {
        var t = ActivityTable()
        _ = t.add(Self.entry("app", owner: .session("s")))
        let mine = Self.entry("mine")
        #expect(t.saved(after: { _ = $0.add(mine) }).activities.map(\.activity.title) == ["mine"])
        #expect(t.saved.activities.isEmpty, "saved(after:) changes nothing")
        _ = t.add(mine)
        #expect(t.saved.activities.map(\.current) == [true])
        var restored = ActivityTable()
        restored.restore(t.saved, at: Self.t0)
        #expect(restored.currentID == mine.activity.id)
    }
}
