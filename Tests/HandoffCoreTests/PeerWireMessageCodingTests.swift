import HandoffCore
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOEmbedded
import Testing

// MARK: - Message coding

@Suite("PeerWire message coding")
struct PeerWireMessageCodingTests {
    private func roundTrip(_ m: PeerMessage, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = PeerMessageCoding.encode(m)
        #expect(bytes.first == m.typeCode, sourceLocation: sourceLocation)
        let back = try PeerMessageCoding.decode(bytes)
        #expect(back == m, sourceLocation: sourceLocation)
        // Bitwise too: == on Double would let -0.0 turn into 0.0 unnoticed.
        #expect(PeerMessageCoding.encode(back) == bytes, sourceLocation: sourceLocation)
    }

    @Test func typeCodesAreDistinctAndStable() {
        let codes: [UInt8] = [
            PeerMessage.hello(PeerHello(deviceName: "x")).typeCode, PeerMessage.subscribe.typeCode,
            PeerMessage.offer(nil).typeCode, PeerMessage.fetch(requestID: 0, activityID: idA).typeCode,
            PeerMessage.fetched(requestID: 0, .failure(code: "", message: "")).typeCode,
            PeerMessage.continued(activityID: idA).typeCode, PeerMessage.error(code: "", message: "").typeCode,
        ]
        #expect(codes == [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07])
        #expect(PeerHello.magic == [0x48, 0x4E, 0x44, 0x46])
    }

    @Test func helloRoundTrips() throws {
        try roundTrip(.hello(PeerHello(deviceName: "laptop")))
        try roundTrip(.hello(PeerHello(version: 0x0203, minimumVersion: 0x0102, deviceName: "Zoë’s 💻 ワークステーション 🇫🇷 𝄞")))
        try roundTrip(.hello(PeerHello(version: UInt16.max, minimumVersion: 0, deviceName: "")))
        try roundTrip(.hello(PeerHello(version: 0, minimumVersion: UInt16.max, deviceName: "\u{0}\n\t\u{7F}")))
        let m = try PeerMessageCoding.decode(PeerMessageCoding.encode(.hello(PeerHello(version: 0x0A0B, minimumVersion: 0x0C0D, deviceName: "é"))))
        guard case .hello(let h) = m else { Issue.record("not a hello: \(m)"); return }
        #expect(h.version == 0x0A0B)
        #expect(h.minimumVersion == 0x0C0D)
        #expect(h.deviceName == "é")
    }

    @Test func subscribeRoundTrips() throws {
        try roundTrip(.subscribe)
    }

    @Test func offerRoundTrips() throws {
        try roundTrip(.offer(fullSummary()))
        try roundTrip(.offer(bareSummary()))
        try roundTrip(.offer(ActivitySummary(edgeActivity(), payloadSize: Int(Int64.max))))
        try roundTrip(.offer(nil))
        // Each optional alone.
        var s = bareSummary()
        s.webpageURL = "http://h"
        try roundTrip(.offer(s))
        s = bareSummary()
        s.expirationDate = Timestamp(seconds: 5, nanoseconds: 6)
        try roundTrip(.offer(s))
        // The flags both ways.
        for (c, n) in [(false, false), (true, false), (false, true), (true, true)] {
            s = fullSummary()
            s.supportsContinuationStreams = c
            s.needsSave = n
            try roundTrip(.offer(s))
        }
        // Distinct field values survive in their places.
        let back = try PeerMessageCoding.decode(PeerMessageCoding.encode(.offer(fullSummary())))
        guard case .offer(let got?) = back else { Issue.record("not an offer: \(back)"); return }
        let a = everyFieldActivity()
        #expect(got.id == a.id)
        #expect(got.activityType == a.activityType)
        #expect(got.title == a.title)
        #expect(got.originName == a.origin.name)
        #expect(got.createdAt == a.createdAt)
        #expect(got.updatedAt == a.updatedAt)
        #expect(got.expirationDate == a.expirationDate)
        #expect(got.webpageURL == a.webpageURL)
        #expect(got.supportsContinuationStreams == a.supportsContinuationStreams)
        #expect(got.needsSave == a.needsSave)
        #expect(got.payloadSize == 123_456)
    }

    @Test(arguments: [UInt64(0), 1, 2, 127, 128, 1 << 62, 1 << 63, UInt64.max - 1, UInt64.max])
    func fetchRoundTrips(requestID: UInt64) throws {
        try roundTrip(.fetch(requestID: requestID, activityID: idA))
        try roundTrip(.fetched(requestID: requestID, .failure(code: "expired", message: "gone")))
        let back = try PeerMessageCoding.decode(PeerMessageCoding.encode(.fetch(requestID: requestID, activityID: idB)))
        #expect(back == .fetch(requestID: requestID, activityID: idB))
    }

    @Test func fetchedActivityRoundTrips() throws {
        for stale in [true, false] {
            try roundTrip(.fetched(requestID: 42, .activity(everyFieldActivity(), stale: stale)))
            try roundTrip(.fetched(requestID: UInt64.max, .activity(minimalActivity(), stale: stale)))
            try roundTrip(.fetched(requestID: 0, .activity(edgeActivity(), stale: stale)))
        }
        // The stale flag is carried, not defaulted.
        let t = try PeerMessageCoding.decode(PeerMessageCoding.encode(.fetched(requestID: 1, .activity(minimalActivity(), stale: true))))
        let f = try PeerMessageCoding.decode(PeerMessageCoding.encode(.fetched(requestID: 1, .activity(minimalActivity(), stale: false))))
        #expect(t != f)
        // Every field of the rich activity, userInfo bit for bit.
        let back = try PeerMessageCoding.decode(PeerMessageCoding.encode(.fetched(requestID: 5, .activity(everyFieldActivity(), stale: true))))
        guard case .fetched(5, .activity(let got, stale: true)) = back else { Issue.record("unexpected \(back)"); return }
        let a = everyFieldActivity()
        #expect(got == a)
        #expect(sameBits(.dictionary(got.userInfo), .dictionary(a.userInfo)))
        #expect(got.origin.id == "dev-1234")
        #expect(got.keywords == a.keywords)
        #expect(got.requiredUserInfoKeys == a.requiredUserInfoKeys)
        // Optionals unset stay unset (not "", not epoch).
        let bare = try PeerMessageCoding.decode(PeerMessageCoding.encode(.fetched(requestID: 5, .activity(minimalActivity(), stale: false))))
        guard case .fetched(_, .activity(let m, _)) = bare else { Issue.record("unexpected \(bare)"); return }
        #expect(m.webpageURL == nil)
        #expect(m.expirationDate == nil)
        #expect(m.origin.id == nil)
    }

    @Test func fetchedFailureContinuedAndErrorRoundTrip() throws {
        try roundTrip(.fetched(requestID: 3, .failure(code: "not-offered", message: "nothing is offered ✋")))
        try roundTrip(.fetched(requestID: 0, .failure(code: "", message: "")))
        try roundTrip(.continued(activityID: idA))
        try roundTrip(.continued(activityID: idB))
        try roundTrip(.error(code: "unexpected-hello", message: "a second hello"))
        try roundTrip(.error(code: "", message: "ünïcödé \u{0} 🇫🇷"))
    }

    @Test func keptIndexAndKeptRoundTripAndAreBounded() throws {
        let origin = Array(repeating: UInt8(7), count: 32)
        try roundTrip(.keptIndex([]))
        try roundTrip(.keptIndex([.init(origin: origin, sequence: 1), .init(origin: Array(repeating: 9, count: 32), sequence: UInt64.max)]))
        try roundTrip(.kept([]))
        try roundTrip(.kept([[1, 2, 3], Array(repeating: 0xAB, count: 4000)]))
        #expect(PeerMessage.keptIndex([]).typeCode == 0x0F && PeerMessage.kept([]).typeCode == 0x15)
        // Over 256 entries, or an origin that is not 32 bytes: malformed, whoever sends it.
        let tooMany = PeerMessageCoding.encode(.keptIndex(Array(repeating: .init(origin: origin, sequence: 1), count: 257)))
        #expect(throws: PeerProtocolError.self) { try PeerMessageCoding.decode(tooMany) }
        let short = PeerMessageCoding.encode(.keptIndex([.init(origin: [1, 2], sequence: 1)]))
        #expect(throws: PeerProtocolError.self) { try PeerMessageCoding.decode(short) }
        let items = PeerMessageCoding.encode(.kept(Array(repeating: [1], count: 257)))
        #expect(throws: PeerProtocolError.self) { try PeerMessageCoding.decode(items) }
    }

    @Test func everySampleRoundTrips() throws {
        for m in sampleMessages() { try roundTrip(m) }
    }

    @Test func upperCaseActivityIDsAreNormalised() throws {
        let upper = "0123456789ABCDEF0123456789ABCDEF"
        let m = try PeerMessageCoding.decode(raw(0x04, .dictionary(["requestID": .integer(1), "activityID": .string(upper)])))
        #expect(m == .fetch(requestID: 1, activityID: ActivityID(upper)!))
        #expect(PeerMessageCoding.encode(m) == PeerMessageCoding.encode(.fetch(requestID: 1, activityID: ActivityID(upper.lowercased())!)))
    }

    @Test func unknownKeysAreIgnored() throws {
        // Forward compatibility within a version: extra keys do not make a message invalid.
        #expect(try PeerMessageCoding.decode(raw(0x02, .dictionary(["future": .integer(1)]))) == .subscribe)
        #expect(try PeerMessageCoding.decode(raw(0x07, .dictionary(["code": .string("c"), "message": .string("m"), "x": .null])))
            == .error(code: "c", message: "m"))
    }
}
