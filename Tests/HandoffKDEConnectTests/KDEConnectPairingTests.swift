import HandoffCore
import Testing
@testable import HandoffKDEConnect

/// Pairing as kdeconnect-kde's PairingHandler does it, with the time given; and the code
/// both sides show.
@Suite("KDE Connect pairing")
struct KDEConnectPairingTests {
    static let t0 = Timestamp(seconds: 1_765_000_000, nanoseconds: 0)
    static func at(_ seconds: Int64) -> Timestamp { t0.adding(nanoseconds: seconds * 1_000_000_000) }
    static func pair(_ yes: Bool, timestamp: Int64? = nil) -> KDEConnectPacket {
        var body: JSONObject = ["pair": .bool(yes)]
        if let timestamp { body["timestamp"] = .integer(timestamp) }
        return KDEConnectPacket(type: KDEConnectPacket.pair, body: body)
    }

    @Test func weAskTheyAccept() {
        var p = KDEConnectPairing(paired: false, protocolVersion: 8)
        #expect(p.request(at: Self.t0) == [.send(pair: true, timestamp: Self.t0.seconds)])
        #expect(p.timestamp == Self.t0.seconds, "the key shown while waiting is made with it")
        #expect(p.received(Self.pair(true), at: Self.at(5)) == [.paired])
        #expect(p.state == .paired)
        // v7 sends no timestamp.
        var old = KDEConnectPairing(paired: false, protocolVersion: 7)
        #expect(old.request(at: Self.t0) == [.send(pair: true, timestamp: nil)])
        #expect(old.timestamp == nil)
    }

    @Test func theyAskTheUserAnswers() {
        var p = KDEConnectPairing(paired: false, protocolVersion: 8)
        #expect(p.received(Self.pair(true, timestamp: Self.t0.seconds - 10), at: Self.t0) == [.askUser(timestamp: Self.t0.seconds - 10)])
        #expect(p.received(Self.pair(true, timestamp: Self.t0.seconds), at: Self.at(1)) == [], "a second request is ignored")
        #expect(p.accept(at: Self.at(2)) == [.send(pair: true, timestamp: nil), .paired])
        var q = KDEConnectPairing(paired: false, protocolVersion: 8)
        _ = q.received(Self.pair(true, timestamp: Self.t0.seconds), at: Self.t0)
        #expect(q.reject() == [.send(pair: false, timestamp: nil)] && q.state == .notPaired)
        // Asking while they asked accepts theirs.
        var r = KDEConnectPairing(paired: false, protocolVersion: 8)
        _ = r.received(Self.pair(true, timestamp: Self.t0.seconds), at: Self.t0)
        #expect(r.request(at: Self.at(1)) == [.send(pair: true, timestamp: nil), .paired])
    }

    @Test func thirtySecondsWithoutAnAnswerCancels() {
        var p = KDEConnectPairing(paired: false, protocolVersion: 8)
        _ = p.request(at: Self.t0)
        #expect(p.timeDue(at: Self.at(29)) == [])
        #expect(p.timeDue(at: Self.at(30)) == [.send(pair: false, timestamp: nil), .failed("timed out: not answered within 30 seconds")])
        #expect(p.state == .notPaired)
        #expect(p.received(Self.pair(true), at: Self.at(31)) == [.failed("the request carried no timestamp")], "a late yes is a new request, and v8 needs its time")
    }

    /// v8: a request without its time, or from a clock 30 minutes off (or at Int64's ends:
    /// no overflow), is refused.
    @Test func aV8RequestNeedsItsTimeWithinHalfAnHour() {
        for bad: Int64? in [nil, Self.t0.seconds + 1801, Self.t0.seconds - 1801, .min, .max] {
            var p = KDEConnectPairing(paired: false, protocolVersion: 8)
            let actions = p.received(Self.pair(true, timestamp: bad), at: Self.t0)
            #expect(actions.count == 1 && { if case .failed = actions[0] { true } else { false } }(), "\(String(describing: bad))")
            #expect(p.state == .notPaired)
        }
        var v7 = KDEConnectPairing(paired: false, protocolVersion: 7)
        #expect(v7.received(Self.pair(true), at: Self.t0) == [.askUser(timestamp: nil)])
    }

    /// kdeconnect 25.04 writes the request's time (a C `long`) as text: {"timestamp":
    /// "1796677496"}, seen from Debian 13's kdeconnectd. KDE reads any number or numeric
    /// text; so do we, and nothing else.
    @Test func aV8TimestampIsReadAsKDEReadsIt() {
        let t = Self.t0.seconds
        for value: JSONValue in [.integer(t), .string(String(t)), .double(Double(t))] {
            var p = KDEConnectPairing(paired: false, protocolVersion: 8)
            #expect(p.received(KDEConnectPacket(type: KDEConnectPacket.pair, body: ["pair": .bool(true), "timestamp": value]), at: Self.t0)
                        == [.askUser(timestamp: t)], "\(value)")
        }
        for value: JSONValue in [.string("soon"), .string(""), .double(Double(t) + 0.5), .bool(true), .null, .array([.integer(t)]), .double(1e300)] {
            var p = KDEConnectPairing(paired: false, protocolVersion: 8)
            let actions = p.received(KDEConnectPacket(type: KDEConnectPacket.pair, body: ["pair": .bool(true), "timestamp": value]), at: Self.t0)
            #expect(actions == [.failed("the request carried no timestamp")], "\(value)")
        }
    }

    @Test func unpairingAndCancelling() {
        var p = KDEConnectPairing(paired: true, protocolVersion: 8)
        #expect(p.received(Self.pair(false), at: Self.t0) == [.unpaired] && p.state == .notPaired)
        #expect(p.received(Self.pair(false), at: Self.t0) == [], "nothing to undo")
        var q = KDEConnectPairing(paired: true, protocolVersion: 8)
        #expect(q.unpair() == [.send(pair: false, timestamp: nil), .unpaired])
        // A request from a paired device unpairs it and asks again (request and answer look the same).
        var r = KDEConnectPairing(paired: true, protocolVersion: 8)
        #expect(r.received(Self.pair(true, timestamp: Self.t0.seconds), at: Self.t0) == [.unpaired, .askUser(timestamp: Self.t0.seconds)])
        // They cancel their own request.
        var s = KDEConnectPairing(paired: false, protocolVersion: 7)
        _ = s.received(Self.pair(true), at: Self.t0)
        #expect(s.received(Self.pair(false), at: Self.at(1)) == [.failed("cancelled on the other device")])
        // A packet without "pair" changes nothing.
        var t = KDEConnectPairing(paired: true, protocolVersion: 8)
        #expect(t.received(KDEConnectPacket(type: KDEConnectPacket.pair), at: Self.t0) == [] && t.state == .paired)
    }

    /// The code is the same on both sides, and matches one made by another implementation
    /// (Python's hashlib: sha256(larger + smaller [+ timestamp]), first 8 hex digits).
    @Test func theVerificationKeyIsTheSameOnBothSides() {
        let a: [UInt8] = [0x30, 0x59, 0x01, 0x02], b: [UInt8] = [0x30, 0x59, 0x01, 0x01, 0xFF]
        #expect(KDEConnectVerificationKey.make(ours: a, theirs: b, timestamp: nil) == "afcd8138")
        #expect(KDEConnectVerificationKey.make(ours: b, theirs: a, timestamp: nil) == "afcd8138")
        #expect(KDEConnectVerificationKey.make(ours: b, theirs: a, timestamp: 1_765_000_000) == "10423F34")
        #expect(KDEConnectVerificationKey.make(ours: b, theirs: a, timestamp: 1_765_000_001) != "10423F34")
    }
}
