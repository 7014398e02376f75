import HandoffControlAPI
import HandoffCore
import Testing
@testable import HandoffDaemon

/// The account's newest copy as one workstation decides it: who wins, what peers are
/// told, what sessions hear, what a paste reaches, with the time given.
@Suite("Clipboard table")
struct ClipboardTableTests {
    static let t0 = Timestamp(seconds: 1_800_000_000, nanoseconds: 0)
    static func at(_ seconds: Double) -> Timestamp { t0.adding(nanoseconds: Int64(seconds * 1e9)) }

    let here = PeerDevice(id: "HERE", name: "desk")
    let laptop = DeviceID(bytes: Array(repeating: 2, count: 32))
    let tablet = DeviceID(bytes: Array(repeating: 3, count: 32))
    let text = [ClipboardFormat(type: "text/plain;charset=utf-8", size: 5), ClipboardFormat(type: "text/html", size: 40)]

    func table() -> ClipboardTable { ClipboardTable(lifetimeSeconds: 600, maximumFormatBytes: 1000) }

    func theirs(_ id: ClipboardID = .random(), age: Int64 = 0, remaining: Int64 = 600_000, formats: [ClipboardFormat]? = nil) -> ClipboardOffer {
        ClipboardOffer(id: id, formats: formats ?? text, ageMilliseconds: age, remainingMilliseconds: remaining)
    }

    @Test func aCopyHereIsAnnouncedWithoutBytesAndHeard() throws {
        var t = table()
        let (id, actions) = try t.copy(text, holder: .bytes([1, 2, 3]), device: here, at: Self.t0)
        let offer = t.ourOffer(at: Self.at(2))!
        #expect(offer.id == id && offer.formats == text && offer.ageMilliseconds == 2000 && offer.remainingMilliseconds == 598_000)
        #expect(actions.count == 2)
        guard case .announce(let sent?) = actions[0], case .emit(let record?) = actions[1] else { Issue.record("\(actions)"); return }
        #expect(sent.id == id && record.local && record.id == id && record.expiresAt == Self.at(600))
    }

    @Test func aFormatOverTheCapIsRefusedWhole() {
        var t = table()
        #expect(throws: ClipboardTable.Refusal.self) { try t.copy([ClipboardFormat(type: "image/png", size: 1001)], holder: .session("s"), device: here, at: Self.t0) }
        #expect(t.newest == nil)
    }

    @Test func theNewerCopyWinsWhereverItWasMade() throws {
        var t = table()
        _ = try t.copy(text, holder: .session("s"), device: here, at: Self.t0)
        // The laptop's copy is 5 s old when it arrives 3 s after ours: older, ignored.
        let older = t.received(theirs(age: 5000), from: laptop, device: PeerDevice(id: "L", name: "laptop"), at: Self.at(3))
        #expect(older.actions.isEmpty && t.newest?.origin == nil)
        // A fresh one replaces ours: peers hear ours is gone, sessions hear the laptop's.
        let fresh = theirs()
        let (actions, _) = t.received(fresh, from: laptop, device: PeerDevice(id: "L", name: "laptop"), at: Self.at(4))
        #expect(actions.first == .announce(nil))
        guard case .emit(let r?) = actions.last else { Issue.record("\(actions)"); return }
        #expect(!r.local && r.device.name == "laptop" && r.id == fresh.id)
        // Our next copy wins again.
        _ = try t.copy(text, holder: .session("s"), device: here, at: Self.at(5))
        #expect(t.newest?.origin == nil)
    }

    @Test func aPeerTakingBackItsCopyOrLeavingClearsOnlyItsOwn() throws {
        var t = table()
        let dev = PeerDevice(id: "L", name: "laptop")
        _ = t.received(theirs(), from: laptop, device: dev, at: Self.t0)
        #expect(t.received(nil, from: tablet, device: dev, at: Self.at(1)).actions.isEmpty)
        #expect(t.linkEnded(tablet, at: Self.at(1)).isEmpty)
        #expect(t.linkEnded(laptop, at: Self.at(2)) == [.emit(nil)])
        #expect(t.newest == nil)
        _ = t.received(theirs(), from: laptop, device: dev, at: Self.at(3))
        #expect(t.received(nil, from: laptop, device: dev, at: Self.at(4)).actions == [.emit(nil)])
    }

    @Test func aPeersFormatsOverTheCapAreLeftOut() {
        var t = table()
        let big = [ClipboardFormat(type: "image/png", size: 5000), ClipboardFormat(type: "text/plain", size: 3)]
        let r = t.received(theirs(formats: big), from: laptop, device: PeerDevice(id: "L", name: "l"), at: Self.t0)
        #expect(r.dropped == 1 && t.newest?.formats == [ClipboardFormat(type: "text/plain", size: 3)])
        let r2 = t.received(theirs(formats: [big[0]]), from: laptop, device: PeerDevice(id: "L", name: "l"), at: Self.at(1))
        #expect(r2.dropped == 1 && t.newest == nil && r2.actions == [.emit(nil)])
    }

    @Test func lifetimesComeFromDurationsAndAreCappedByOurs() {
        var t = table()
        // The peer claims a day: we keep ours, ten minutes.
        _ = t.received(theirs(age: 1000, remaining: 86_400_000), from: laptop, device: PeerDevice(id: "L", name: "l"), at: Self.t0)
        #expect(t.newest?.expiresAt == Self.at(600) && t.newest?.copiedAt == Self.at(-1))
        #expect(t.nextExpiry == Self.at(600))
        #expect(t.expire(at: Self.at(599.9)).isEmpty)
        #expect(t.expire(at: Self.at(600)) == [.emit(nil)])
        // Durations near Int64.max are capped, not overflowed.
        _ = t.received(theirs(age: .max, remaining: .max), from: laptop, device: PeerDevice(id: "L", name: "l"), at: Self.at(700))
        #expect(t.newest?.expiresAt == Self.at(1300))
        // Nothing left to paste.
        _ = t.received(theirs(remaining: 0), from: laptop, device: PeerDevice(id: "L", name: "l"), at: Self.at(601))
        #expect(t.newest == nil)
    }

    @Test func ourCopyExpiresAndIsWithdrawnFromPeers() throws {
        var t = table()
        _ = try t.copy(text, holder: .session("s"), device: here, at: Self.t0)
        #expect(t.expire(at: Self.at(600)) == [.announce(nil), .emit(nil)])
        #expect(t.ourOffer(at: Self.at(600)) == nil)
    }

    @Test func theHoldingSessionEndingWithdrawsOnlyItsCopy() throws {
        var t = table()
        _ = try t.copy(text, holder: .session("s"), device: here, at: Self.t0)
        #expect(t.sessionEnded("other", at: Self.at(1)).isEmpty)
        #expect(t.sessionEnded("s", at: Self.at(1)) == [.announce(nil), .emit(nil)])
        _ = t.received(theirs(), from: laptop, device: PeerDevice(id: "L", name: "l"), at: Self.at(2))
        #expect(t.withdraw(at: Self.at(3)).isEmpty, "a peer's copy is not ours to withdraw")
    }

    @Test func aPullMustNameTheNewestCopyAndAnOfferedFormat() throws {
        var t = table()
        let (id, _) = try t.copy(text, holder: .bytes([1]), device: here, at: Self.t0)
        let (holder, format) = try t.source(of: id, type: "text/html", at: Self.at(1))
        #expect(holder == .bytes([1]) && format.size == 40)
        #expect(throws: ClipboardTable.Refusal(code: "format_not_offered", message: "the copy was not offered as image/png; it is offered as text/plain;charset=utf-8, text/html")) {
            try t.source(of: id, type: "image/png", at: Self.at(1))
        }
        // Copied again: the old id is refused, never served with the new bytes.
        let (again, _) = try t.copy(text, holder: .bytes([2]), device: here, at: Self.at(2))
        #expect(throws: ClipboardTable.Refusal.self) { try t.source(of: id, type: "text/html", at: Self.at(3)) }
        #expect(try t.source(of: again, type: "text/html", at: Self.at(3)).0 == .bytes([2]))
        #expect(throws: ClipboardTable.Refusal.self) { try t.source(of: again, type: "text/html", at: Self.at(603)) }
    }

    @Test func aPasteHereReachesTheNewestCopy() throws {
        var t = table()
        #expect(throws: ClipboardTable.Refusal.self) { try t.pasteTarget(id: nil, type: nil, at: Self.t0) }
        let offer = theirs()
        _ = t.received(offer, from: laptop, device: PeerDevice(id: "L", name: "l"), at: Self.t0)
        #expect(try t.pasteTarget(id: nil, type: nil, at: Self.at(1)) == .peer(laptop, offer.id, text[0]))
        #expect(try t.pasteTarget(id: offer.id, type: "text/html", at: Self.at(1)) == .peer(laptop, offer.id, text[1]))
        #expect(throws: ClipboardTable.Refusal.self) { try t.pasteTarget(id: .random(), type: nil, at: Self.at(1)) }
        #expect(throws: ClipboardTable.Refusal.self) { try t.pasteTarget(id: nil, type: "image/png", at: Self.at(1)) }
        let (mine, _) = try t.copy(text, holder: .bytes([9]), device: here, at: Self.at(2))
        #expect(try t.pasteTarget(id: nil, type: nil, at: Self.at(3)) == .local(.bytes([9]), text[0], mine))
    }
}
