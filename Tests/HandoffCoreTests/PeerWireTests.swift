import HandoffCore
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOEmbedded
import Testing

// MARK: - Shared fixtures

private let idA = ActivityID("0123456789abcdef0123456789abcdef")!
private let idB = ActivityID("ffffffffffffffffffffffffffffffff")!

/// An activity with every optional field unset and every flag at its default.
private func minimalActivity() -> Activity {
    Activity(id: idB, activityType: "a.b", createdAt: Timestamp(seconds: 0), origin: DeviceRef(name: ""))
}

/// An activity at the edges of what a date may be, with the flags opposite to
/// `everyFieldActivity()`.
private func edgeActivity() -> Activity {
    var a = minimalActivity()
    a.title = ""
    a.userInfo = ["only": .set([.integer(Int64.min), .double(-0.0), .date(Timestamp(seconds: Timestamp.representableSeconds.upperBound, nanoseconds: 999_999_999))])]
    a.createdAt = Timestamp(seconds: Timestamp.representableSeconds.lowerBound, nanoseconds: 0)
    a.updatedAt = Timestamp(seconds: Timestamp.representableSeconds.upperBound, nanoseconds: 999_999_999)
    a.expirationDate = Timestamp(seconds: -1, nanoseconds: 999_999_999)
    a.eligibleForHandoff = true
    a.eligibleForSearch = false
    a.eligibleForPublicIndexing = false
    a.supportsContinuationStreams = false
    a.needsSave = false
    a.origin = DeviceRef(name: "desk 🖥", id: "")
    return a
}

private func fullSummary() -> ActivitySummary {
    let s = ActivitySummary(everyFieldActivity(), payloadSize: 123_456)
    // Precondition of the fixture: every optional is set.
    precondition(s.expirationDate != nil && s.webpageURL != nil)
    return s
}

private func bareSummary() -> ActivitySummary {
    let s = ActivitySummary(minimalActivity(), payloadSize: 0)
    precondition(s.expirationDate == nil && s.webpageURL == nil)
    return s
}

/// One of every message, with edge values: the corpus for round trips, truncations and
/// mutation fuzzing.
private func sampleMessages() -> [PeerMessage] {
    [
        .hello(PeerHello(deviceName: "laptop")),
        .hello(PeerHello(version: 0x0203, minimumVersion: 0x0102, deviceName: "Zoë’s 💻 ワークステーション \u{0}\u{2028}")),
        .hello(PeerHello(version: UInt16.max, minimumVersion: 0, deviceName: "")),
        .subscribe,
        .offer(fullSummary()),
        .offer(bareSummary()),
        .offer(ActivitySummary(edgeActivity(), payloadSize: Int(Int64.max))),
        .offer(nil),
        .fetch(requestID: 0, activityID: idA),
        .fetch(requestID: 1, activityID: idB),
        .fetch(requestID: UInt64.max, activityID: idA),
        .fetch(requestID: 1 << 63, activityID: idA),
        .fetched(requestID: 7, .activity(everyFieldActivity(), stale: true)),
        .fetched(requestID: UInt64.max, .activity(everyFieldActivity(), stale: false)),
        .fetched(requestID: 0, .activity(minimalActivity(), stale: false)),
        .fetched(requestID: 1 << 63, .activity(edgeActivity(), stale: true)),
        .fetched(requestID: 3, .failure(code: "not-offered", message: "nothing is offered ✋")),
        .fetched(requestID: UInt64.max, .failure(code: "", message: "")),
        .continued(activityID: idA),
        .error(code: "unexpected-hello", message: "a second hello"),
        .error(code: "", message: "ünïcödé \u{0}"),
        .hello(PeerHello(deviceName: "desk", purpose: .stream, listenPort: 1)),
        .hello(PeerHello(deviceName: "desk", purpose: .link, listenPort: UInt16.max)),
        .hello(PeerHello(deviceName: "desk", purpose: .link, listenPort: 7443, time: Timestamp(seconds: 1_800_000_000, nanoseconds: 5))),
        .hello(PeerHello(deviceName: "desk", listenPort: 7443, instance: "3f9c2b0e5a6d")),
        .hello(PeerHello(deviceName: "desk", instance: String(repeating: "é", count: 31) + "x")),
        .streamOpen(activityID: idA),
        .streamAccepted(length: nil),
        .streamAccepted(length: 0),
        .streamAccepted(length: Int64.max),
        .stream(.end),
        .stream(.error(code: "peer-gone", message: "ünïcödé \u{0}")),
    ]
}

/// A frame as it travels: 4-byte big-endian length, then the message bytes.
private func framed(_ m: PeerMessage) -> [UInt8] {
    let bytes = PeerMessageCoding.encode(m)
    let n = UInt32(bytes.count)
    return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + bytes
}

private func lengthHeader(_ n: UInt32) -> [UInt8] {
    [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
}

/// A message of `type` whose body is `body` in the binary encoding.
private func raw(_ type: UInt8, _ body: PropertyValue) -> [UInt8] {
    [type] + PropertyBinaryEncoding.encode(body)
}

private let helloMagic: [UInt8] = Array("HNDF".utf8)

/// Expects `bytes` to be refused with `code`.
private func expectRejected(
    _ bytes: [UInt8], code: String = "malformed", _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let m = try PeerMessageCoding.decode(bytes)
        Issue.record("expected \(code), decoded \(m) \(comment.map { "(\($0))" } ?? "")", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == code, comment, sourceLocation: sourceLocation)
    }
}

private func expectAccepted(
    _ bytes: [UInt8], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
) -> PeerMessage? {
    do {
        return try PeerMessageCoding.decode(bytes)
    } catch {
        Issue.record("expected a message, got \(error) \(comment.map { "(\($0))" } ?? "")", sourceLocation: sourceLocation)
        return nil
    }
}

/// The property list of a fetched-activity message, for tampering with.
private func fetchedBody(_ a: Activity = everyFieldActivity(), stale: Bool = false) -> [String: PropertyValue] {
    ["requestID": .integer(9), "activity": ActivityPropertyList.encode(a), "stale": .boolean(stale)]
}

private func activityDictionary(_ a: Activity = everyFieldActivity()) -> [String: PropertyValue] {
    guard case .dictionary(let d) = ActivityPropertyList.encode(a) else { fatalError("not a dictionary") }
    return d
}

private func summaryDictionary(_ s: ActivitySummary = fullSummary()) -> [String: PropertyValue] {
    guard case .dictionary(let d) = s.propertyList else { fatalError("not a dictionary") }
    return d
}

private func containsNaN(_ v: PropertyValue) -> Bool {
    switch v {
    case .double(let d): d.isNaN
    case .array(let items), .set(let items): items.contains(where: containsNaN)
    case .dictionary(let d): d.values.contains(where: containsNaN)
    default: false
    }
}

private func containsNaN(_ m: PeerMessage) -> Bool {
    if case .fetched(_, .activity(let a, _)) = m { return a.userInfo.values.contains(where: containsNaN) }
    return false
}

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

// MARK: - Exact bytes

@Suite("PeerWire exact bytes")
struct PeerWireExactBytesTests {
    @Test func subscribeBytes() {
        #expect(PeerMessageCoding.encode(.subscribe) == [0x02, 0x0A, 0x00])
    }

    @Test func offerNilBytes() {
        #expect(PeerMessageCoding.encode(.offer(nil)) == [0x03, 0x0A, 0x00])
    }

    @Test func helloBytes() {
        let bytes = PeerMessageCoding.encode(.hello(PeerHello(version: 0x0203, minimumVersion: 0x0102, deviceName: "a")))
        #expect(Array(bytes.prefix(9)) == [0x01, 0x48, 0x4E, 0x44, 0x46, 0x02, 0x03, 0x01, 0x02])
        #expect(bytes == [0x01, 0x48, 0x4E, 0x44, 0x46, 0x02, 0x03, 0x01, 0x02]
            + [0x0A, 0x01, 0x0A] + Array("deviceName".utf8) + [0x05, 0x01, 0x61])
        let current = PeerMessageCoding.encode(.hello(PeerHello(deviceName: "x")))
        // Version 4 (forgetting history, PeerProtocol.md §20), still speaking versions 1 to 3.
        #expect(Array(current.prefix(9)) == [0x01] + helloMagic + [0x00, 0x04, 0x00, 0x01])
        #expect(PeerHello.currentVersion == 4)
        #expect(PeerHello.minimumVersion == 1)
        // `instance` sorts between deviceName and listenPort (7443, a zigzag varint); seed-16 of
        // the fuzz corpus is these bytes with a time.
        let withInstance = PeerMessageCoding.encode(.hello(PeerHello(version: 1, deviceName: "desk", listenPort: 7443, instance: "3f9c2b0e5a6d")))
        #expect(withInstance == [0x01] + helloMagic + [0x00, 0x01, 0x00, 0x01] + [0x0A, 0x03]
            + [0x0A] + Array("deviceName".utf8) + [0x05, 0x04] + Array("desk".utf8)
            + [0x08] + Array("instance".utf8) + [0x05, 0x0C] + Array("3f9c2b0e5a6d".utf8)
            + [0x0A] + Array("listenPort".utf8) + [0x03, 0xA6, 0x74])
    }

    @Test func fetchBytes() {
        let id = Array(idA.rawValue.utf8)
        let head: [UInt8] = [0x04, 0x0A, 0x02, 0x0A] + Array("activityID".utf8) + [0x05, 0x20] + id + [0x09] + Array("requestID".utf8)
        #expect(PeerMessageCoding.encode(.fetch(requestID: 0, activityID: idA)) == head + [0x03, 0x00])
        #expect(PeerMessageCoding.encode(.fetch(requestID: 1, activityID: idA)) == head + [0x03, 0x02])
        // UInt64.max travels as the integer -1 (bit pattern), zigzag 1.
        #expect(PeerMessageCoding.encode(.fetch(requestID: UInt64.max, activityID: idA)) == head + [0x03, 0x01])
    }

    @Test func continuedAndErrorBytes() {
        #expect(PeerMessageCoding.encode(.continued(activityID: idB))
            == [0x06, 0x0A, 0x01, 0x0A] + Array("activityID".utf8) + [0x05, 0x20] + Array(repeating: UInt8(ascii: "f"), count: 32))
        #expect(PeerMessageCoding.encode(.error(code: "x", message: "y"))
            == [0x07, 0x0A, 0x02, 0x04] + Array("code".utf8) + [0x05, 0x01, 0x78] + [0x07] + Array("message".utf8) + [0x05, 0x01, 0x79])
    }

    @Test func fetchedFailureBytes() {
        #expect(PeerMessageCoding.encode(.fetched(requestID: 2, .failure(code: "c", message: "m")))
            == [0x05, 0x0A, 0x03]
            + [0x09] + Array("errorCode".utf8) + [0x05, 0x01, 0x63]
            + [0x0C] + Array("errorMessage".utf8) + [0x05, 0x01, 0x6D]
            + [0x09] + Array("requestID".utf8) + [0x03, 0x04])
    }

    @Test func frameBytes() {
        #expect(framed(.subscribe) == [0x00, 0x00, 0x00, 0x03, 0x02, 0x0A, 0x00])
    }
}

// MARK: - Hostile input

@Suite("PeerWire hostile input")
struct PeerWireHostileInputTests {
    @Test func emptyFrame() {
        expectRejected([])
    }

    @Test(arguments: [UInt8(0x00), 0x0A, 0x0F, 0x13, 0x14, 0x7F, 0x80, 0xFF])
    func unknownType(type: UInt8) {
        expectRejected(raw(type, .dictionary([:])))
        expectRejected([type])
    }

    @Test func helloWithoutOrWithWrongMagic() {
        let tail: [UInt8] = [0x00, 0x01, 0x00, 0x01] + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .string("x")]))
        // Sanity: the correct form is accepted.
        _ = expectAccepted([0x01] + helloMagic + tail)
        expectRejected([0x01], code: "not-handoff")
        for n in 0..<8 {
            expectRejected([0x01] + Array((helloMagic + [0x00, 0x01, 0x00, 0x01]).prefix(n)), code: "not-handoff", "\(n) bytes after the type")
        }
        expectRejected([0x01] + Array("HNDG".utf8) + tail, code: "not-handoff")
        expectRejected([0x01] + Array("hndf".utf8) + tail, code: "not-handoff")
        expectRejected([0x01] + Array("FDNH".utf8) + tail, code: "not-handoff")
        expectRejected([0x01] + [0x00, 0x00, 0x00, 0x00] + tail, code: "not-handoff")
        // A hello-shaped body without the magic: the dictionary straight after the type.
        expectRejected(raw(0x01, .dictionary(["deviceName": .string("x")])), code: "not-handoff")
        // Something else entirely (e.g. an HTTP request on the peer port).
        expectRejected([0x01] + Array("GET / HTTP/1.1\r\n\r\n".utf8), code: "not-handoff")
        do {
            _ = try PeerMessageCoding.decode([0x01])
        } catch {
            #expect(error == PeerProtocolError.notHandoff)
        }
    }

    @Test func helloBody() {
        let head: [UInt8] = [0x01] + helloMagic + [0x00, 0x01, 0x00, 0x01]
        expectRejected(head, "no body at all")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary([:])), "no deviceName")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary(["name": .string("x")])), "deviceName misspelt")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .integer(1)])), "deviceName an integer")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .url("x")])), "deviceName a URL")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .null])), "deviceName null")
        expectRejected(head + PropertyBinaryEncoding.encode(.array([.string("x")])), "body an array")
        expectRejected(head + PropertyBinaryEncoding.encode(.string("x")), "body a string")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .string("x")])) + [0x00], "trailing byte")
    }

    @Test func helloInstanceIsOneDNSLabelOrAbsent() {
        let head: [UInt8] = [0x01] + helloMagic + [0x00, 0x01, 0x00, 0x01]
        func hello(_ instance: PropertyValue) -> [UInt8] {
            head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .string("x"), "instance": instance]))
        }
        guard case .hello(let h)? = expectAccepted(hello(.string(String(repeating: "a", count: 63)))) else {
            Issue.record("63 bytes: not a hello")
            return
        }
        #expect(h.instance?.utf8.count == 63)
        expectRejected(hello(.string(String(repeating: "a", count: 64))), code: "malformed", "64 bytes: longer than a DNS label")
        expectRejected(hello(.string(String(repeating: "é", count: 32))), code: "malformed", "64 bytes in 32 characters")
        expectRejected(hello(.string("")), code: "malformed", "empty")
        expectRejected(hello(.integer(7)), code: "malformed", "an integer")
        expectRejected(hello(.null), code: "malformed", "null")
        guard case .hello(let without)? = expectAccepted(head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .string("x")]))) else {
            Issue.record("without an instance: not a hello")
            return
        }
        #expect(without.instance == nil, "older peers send none")
    }

    @Test(arguments: [UInt8(0x02), 0x03, 0x04, 0x05, 0x06, 0x07])
    func bodiesThatAreNotDictionaries(type: UInt8) {
        expectRejected([type], "no body")
        for body: PropertyValue in [.array([]), .set([]), .string("x"), .null, .integer(0), .boolean(true), .data([0x0A, 0x00]), .url("x"), .array([.dictionary([:])])] {
            expectRejected(raw(type, body), "body \(body)")
        }
        expectRejected(raw(type, .dictionary([:])) + [0x00], "trailing bytes after the body")
        expectRejected([type, 0x0A, 0x01], "dictionary truncated")
        expectRejected([type, 0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "huge count")
        expectRejected([type, 0x0A, 0x02, 0x01, 0x61, 0x00, 0x01, 0x61, 0x00], "duplicate key")
        expectRejected([type, 0x0A, 0x01, 0x01, 0xFF, 0x00], "key not UTF-8")
        expectRejected([type, 0x0C], "unknown value tag")
    }

    @Test func badFetch() {
        let good: [String: PropertyValue] = ["requestID": .integer(1), "activityID": .string(idA.rawValue)]
        _ = expectAccepted(raw(0x04, .dictionary(good)))
        for badID: PropertyValue in [
            .string(""), .string("xyz"), .string(String(idA.rawValue.dropLast())), .string(idA.rawValue + "0"),
            .string("g123456789abcdef0123456789abcdef"), .string("0123456789abcdef-0123456789abcde"),
            .string(" 123456789abcdef0123456789abcdef"), .string("０123456789abcdef0123456789abcde"),
            .url(idA.rawValue), .data(Array(idA.rawValue.utf8)), .integer(1), .null,
        ] {
            var d = good
            d["activityID"] = badID
            expectRejected(raw(0x04, .dictionary(d)), "activityID \(badID)")
            expectRejected(raw(0x06, .dictionary(["activityID": badID])), "continued activityID \(badID)")
        }
        for badRequest: PropertyValue in [.string("1"), .double(1), .boolean(true), .null, .date(Timestamp(seconds: 1))] {
            var d = good
            d["requestID"] = badRequest
            expectRejected(raw(0x04, .dictionary(d)), "requestID \(badRequest)")
        }
        expectRejected(raw(0x04, .dictionary(["requestID": .integer(1)])), "no activityID")
        expectRejected(raw(0x04, .dictionary(["activityID": .string(idA.rawValue)])), "no requestID")
        expectRejected(raw(0x06, .dictionary([:])), "continued without an id")
    }

    @Test func badError() {
        expectRejected(raw(0x07, .dictionary(["code": .string("c")])))
        expectRejected(raw(0x07, .dictionary(["message": .string("m")])))
        expectRejected(raw(0x07, .dictionary(["code": .integer(1), "message": .string("m")])))
        expectRejected(raw(0x07, .dictionary(["code": .string("c"), "message": .data([])])))
    }

    @Test func fetchedFailureMissingFields() {
        expectRejected(raw(0x05, .dictionary([:])))
        expectRejected(raw(0x05, .dictionary(["requestID": .integer(1)])), "neither activity nor error")
        expectRejected(raw(0x05, .dictionary(["requestID": .integer(1), "errorCode": .string("c")])))
        expectRejected(raw(0x05, .dictionary(["requestID": .integer(1), "errorMessage": .string("m")])))
        expectRejected(raw(0x05, .dictionary(["requestID": .integer(1), "errorCode": .null, "errorMessage": .string("m")])))
        expectRejected(raw(0x05, .dictionary(["errorCode": .string("c"), "errorMessage": .string("m")])), "no requestID")
    }

    @Test func fetchedActivityWithAFieldMissing() {
        _ = expectAccepted(raw(0x05, .dictionary(fetchedBody())))
        let optional: Set<String> = ["webpageURL", "expirationDate", "originID", "referrerURL", "persistentIdentifier", "targetContentIdentifier",
                                     "eligibleForPrediction", "contentDescription", "displayName", "thumbnail"]
        let full = activityDictionary()
        #expect(Set(full.keys).isSuperset(of: optional))
        for key in full.keys.sorted() {
            var a = full
            a[key] = nil
            var body = fetchedBody()
            body["activity"] = .dictionary(a)
            if optional.contains(key) {
                let m = expectAccepted(raw(0x05, .dictionary(body)), "without optional \(key)")
                if case .fetched(_, .activity(let got, _))? = m {
                    switch key {
                    case "webpageURL": #expect(got.webpageURL == nil)
                    case "expirationDate": #expect(got.expirationDate == nil)
                    case "originID": #expect(got.origin.id == nil)
                    default:
                        // The newer fields: absent from what an older peer sends, and left unset.
                        if case .dictionary(let d) = ActivityPropertyList.encode(got) { #expect(d[key] == nil, "\(key)") }
                    }
                } else {
                    Issue.record("without \(key): \(String(describing: m))")
                }
            } else {
                expectRejected(raw(0x05, .dictionary(body)), "without \(key)")
            }
        }
        for key in ["requestID", "stale"] {
            var body = fetchedBody()
            body[key] = nil
            expectRejected(raw(0x05, .dictionary(body)), "without \(key)")
        }
    }

    @Test func fetchedActivityWithInvalidValues() {
        let cases: [(String, PropertyValue)] = [
            ("id", .string("not-an-id")), ("id", .integer(1)),
            ("activityType", .integer(1)), ("activityType", .null),
            ("title", .data([])),
            ("userInfo", .array([])), ("userInfo", .string("{}")),
            ("requiredUserInfoKeys", .string("a")), ("requiredUserInfoKeys", .array([.integer(1)])), ("requiredUserInfoKeys", .set([.string("a")])),
            ("keywords", .array([.string("ok"), .null])), ("keywords", .dictionary([:])),
            ("webpageURL", .string("https://example.com")), ("webpageURL", .null),
            ("expirationDate", .integer(0)), ("expirationDate", .string("2026-01-01T00:00:00Z")), ("expirationDate", .null),
            ("createdAt", .double(0)), ("updatedAt", .null),
            ("originName", .null), ("originID", .integer(7)), ("originID", .null),
            ("eligibleForHandoff", .integer(1)), ("eligibleForSearch", .string("true")),
            ("eligibleForPublicIndexing", .null), ("supportsContinuationStreams", .integer(0)), ("needsSave", .data([1])),
        ]
        for (key, value) in cases {
            var a = activityDictionary()
            a[key] = value
            var body = fetchedBody()
            body["activity"] = .dictionary(a)
            expectRejected(raw(0x05, .dictionary(body)), "\(key) = \(value)")
        }
        for activity: PropertyValue in [.null, .array([]), .string("x"), .dictionary([:])] {
            var body = fetchedBody()
            body["activity"] = activity
            expectRejected(raw(0x05, .dictionary(body)), "activity = \(activity)")
        }
        for stale: PropertyValue in [.integer(1), .string("true"), .null] {
            var body = fetchedBody()
            body["stale"] = stale
            expectRejected(raw(0x05, .dictionary(body)), "stale = \(stale)")
        }
        var body = fetchedBody()
        body["requestID"] = .string("9")
        expectRejected(raw(0x05, .dictionary(body)), "requestID a string")
    }

    @Test func offerWithABadSummary() {
        _ = expectAccepted(raw(0x03, .dictionary(["activity": fullSummary().propertyList])))
        let optional: Set<String> = ["webpageURL", "expirationDate", "search"]
        let full = summaryDictionary()
        #expect(Set(full.keys).isSuperset(of: optional))
        for key in full.keys.sorted() {
            var s = full
            s[key] = nil
            let bytes = raw(0x03, .dictionary(["activity": .dictionary(s)]))
            if optional.contains(key) {
                _ = expectAccepted(bytes, "without optional \(key)")
            } else {
                expectRejected(bytes, "without \(key)")
            }
        }
        let cases: [(String, PropertyValue)] = [
            ("activityType", .string("")), ("activityType", .string("noDots")), ("activityType", .string("com..example")),
            ("activityType", .string("com.example.")), ("activityType", .string("com.exa mple")), ("activityType", .string("com.exämple")),
            ("activityType", .string("com.example/edit")), ("activityType", .string(String(repeating: "a.", count: 400) + "a")),
            ("activityType", .integer(1)),
            ("id", .string("nope")), ("id", .string(idA.rawValue + "00")),
            ("webpageURL", .url("ftp://example.com")), ("webpageURL", .url("javascript:alert(1)")), ("webpageURL", .url("https://")),
            ("webpageURL", .url("https://exa mple.com")), ("webpageURL", .url("https://example.com/\u{0}")),
            ("webpageURL", .string("https://example.com")),
            ("payloadSize", .integer(-1)), ("payloadSize", .integer(Int64.min)), ("payloadSize", .string("1")), ("payloadSize", .double(1)),
            ("createdAt", .integer(0)), ("updatedAt", .string("now")), ("expirationDate", .integer(0)), ("expirationDate", .null),
            ("title", .null), ("originName", .integer(0)),
            ("supportsContinuationStreams", .integer(1)), ("needsSave", .string("no")),
        ]
        for (key, value) in cases {
            var s = full
            s[key] = value
            expectRejected(raw(0x03, .dictionary(["activity": .dictionary(s)])), "summary \(key) = \(value)")
        }
        for activity: PropertyValue in [.null, .array([]), .string("x"), .dictionary([:]), .boolean(false)] {
            expectRejected(raw(0x03, .dictionary(["activity": activity])), "summary = \(activity)")
        }
    }

    @Test func everyTruncationFailsCleanly() {
        for m in sampleMessages() {
            let bytes = PeerMessageCoding.encode(m)
            for n in 0..<bytes.count {
                do {
                    let got = try PeerMessageCoding.decode(Array(bytes.prefix(n)))
                    Issue.record("\(n) of \(bytes.count) bytes of \(m.typeCode) decoded as \(got)")
                } catch {
                    // Only a hello cut inside its first 9 bytes lacks the magic and versions.
                    let expected = m.typeCode == 0x01 && (1..<9).contains(n) ? "not-handoff" : "malformed"
                    #expect(error.code == expected, "\(n) of \(bytes.count) bytes of type \(m.typeCode)")
                }
            }
        }
    }

    @Test func everyTruncationOfAFetchedActivityIsMalformed() {
        let bytes = PeerMessageCoding.encode(.fetched(requestID: 77, .activity(everyFieldActivity(), stale: true)))
        #expect(bytes.count > 500)
        var failures: [Int] = []
        for n in 0..<bytes.count {
            do {
                _ = try PeerMessageCoding.decode(Array(bytes.prefix(n)))
                failures.append(n)
            } catch {
                if error.code != "malformed" { failures.append(n) }
            }
        }
        #expect(failures.isEmpty, "prefixes not refused as malformed: \(failures.prefix(10))")
    }

    @Test func deeplyNestedBodyIsRefused() {
        // A subscribe body {"a": [[[...100 deep...]]]}: over the binary decoder's depth limit.
        var bytes: [UInt8] = [0x02, 0x0A, 0x01, 0x01, 0x61]
        for _ in 0..<100 { bytes += [0x09, 0x01] }
        bytes.append(0x00)
        expectRejected(bytes)
        // Within the limit it is fine.
        var shallow: [UInt8] = [0x02, 0x0A, 0x01, 0x01, 0x61]
        for _ in 0..<10 { shallow += [0x09, 0x01] }
        shallow.append(0x00)
        #expect(expectAccepted(shallow) == .subscribe)
        // PeerProtocol.md §6.2: the body is depth 0; a value at depth 63 is fine, at 64 an error.
        func nested(_ arrays: Int) -> [UInt8] {
            var b: [UInt8] = [0x02, 0x0A, 0x01, 0x01, 0x61]
            for _ in 0..<arrays { b += [0x09, 0x01] }
            return b + [0x00]
        }
        #expect(expectAccepted(nested(62), "null at depth 63") == .subscribe)
        expectRejected(nested(63), "null at depth 64")
    }

    @Test func canonicallyEquivalentKeysAreDuplicates() {
        // PeerProtocol.md §6.1: "é" as c3 a9 and as 65 cc 81 are the same key.
        let body: [UInt8] = [0x0A, 0x02, 0x02, 0xC3, 0xA9, 0x00, 0x03, 0x65, 0xCC, 0x81, 0x00]
        expectRejected([0x02] + body)
        expectRejected([0x07, 0x0A, 0x03] + [0x04] + Array("code".utf8) + [0x05, 0x01, 0x78]
            + [0x07] + Array("message".utf8) + [0x05, 0x00] + [0x04] + Array("code".utf8) + [0x05, 0x01, 0x79], "code twice")
    }

    @Test func entriesInAnyOrderAreAccepted() {
        // PeerProtocol.md §6.1: a decoder SHOULD accept entries in any order.
        let unsorted: [UInt8] = [0x04, 0x0A, 0x02, 0x09] + Array("requestID".utf8) + [0x03, 0x02]
            + [0x0A] + Array("activityID".utf8) + [0x05, 0x20] + Array(idA.rawValue.utf8)
        #expect(expectAccepted(unsorted) == .fetch(requestID: 1, activityID: idA))
    }

    /// Decode never crashes, and refuses with a PeerProtocolError or yields a message
    /// that re-encodes and decodes to itself.
    @Test func fuzz() {
        var g = XorShift64(seed: 0x5EED_F00D_1234_5678)
        let seeds = sampleMessages().map(PeerMessageCoding.encode)
        var accepted = 0, refused = 0
        var failures: [String] = []

        func check(_ input: [UInt8]) {
            let m: PeerMessage
            do {
                m = try PeerMessageCoding.decode(input)
            } catch {
                refused += 1
                if error.code != "malformed" && error.code != "not-handoff" { failures.append("code \(error.code) for \(input)") }
                return
            }
            accepted += 1
            let again = PeerMessageCoding.encode(m)
            do {
                let m2 = try PeerMessageCoding.decode(again)
                if PeerMessageCoding.encode(m2) != again { failures.append("re-encoding differs for \(input)") }
                if m2 != m && !containsNaN(m) { failures.append("\(m) became \(m2) from \(input)") }
            } catch {
                failures.append("re-encoding of \(m) from \(input) refused: \(error)")
            }
        }

        // Random byte strings, mostly with a known type byte so bodies get exercised.
        for i in 0..<3000 {
            var input = g.bytes(g.below(48))
            if !input.isEmpty && i % 4 != 0 { input[0] = UInt8(1 + g.below(7)) }
            if i % 5 == 0, !input.isEmpty { input.insert(0x0A, at: 1) }
            if i % 7 == 0, input.first == 0x01 { input.replaceSubrange(1..<min(input.count, 5), with: helloMagic) }
            check(input)
        }
        // Random structurally valid bodies of random values.
        for _ in 0..<1000 {
            var d: [String: PropertyValue] = [:]
            let keys = ["requestID", "activityID", "activity", "stale", "errorCode", "errorMessage", "code", "message", "deviceName", "x"]
            for _ in 0..<g.below(5) { d[keys[g.below(keys.count)]] = randomValue(&g, depth: 2) }
            if g.below(2) == 0 { d["activityID"] = .string(idA.rawValue) }
            if g.below(2) == 0 { d["requestID"] = .integer(Int64(bitPattern: g.next())) }
            let type = UInt8(1 + g.below(7))
            check(type == 0x01 ? [0x01] + helloMagic + g.bytes(4) + PropertyBinaryEncoding.encode(.dictionary(d)) : raw(type, .dictionary(d)))
        }
        // Mutations of valid encodings.
        for _ in 0..<4000 {
            var input = seeds[g.below(seeds.count)]
            for _ in 0..<(1 + g.below(3)) {
                guard !input.isEmpty else { break }
                let at = g.below(input.count)
                switch g.below(6) {
                case 0: input[at] = g.byte()
                case 1: input[at] ^= UInt8(1) << UInt8(g.below(8))
                case 2: input.remove(at: at)
                case 3: input.insert(g.byte(), at: at)
                case 4: input.removeSubrange(at...)
                default: input[at] = [0x00, 0x01, 0x7F, 0x80, 0xFF][g.below(5)]
                }
            }
            check(input)
        }
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(5))")
        // The fuzz reached both outcomes (it is not all rejected at the first byte).
        #expect(accepted > 100)
        #expect(refused > 1000)
    }
}

// MARK: - Version negotiation

@Suite("PeerWire hello compatibility")
struct PeerWireCompatibilityTests {
    let ours = PeerHello(version: 3, minimumVersion: 2, deviceName: "us")

    private func peer(_ version: UInt16, _ minimum: UInt16) -> PeerHello {
        PeerHello(version: version, minimumVersion: minimum, deviceName: "them")
    }

    @Test func sameVersions() {
        #expect(peer(3, 2).compatibility(with: ours) == .compatible(3))
        let current = PeerHello(deviceName: "a")
        #expect(PeerHello(deviceName: "b").compatibility(with: current) == .compatible(PeerHello.currentVersion))
        #expect(peer(7, 7).compatibility(with: peer(7, 7)) == .compatible(7))
    }

    @Test func peerTooOld() {
        #expect(peer(1, 1).compatibility(with: ours) == .peerTooOld)
        #expect(peer(1, 0).compatibility(with: ours) == .peerTooOld)
        #expect(peer(0, 0).compatibility(with: ours) == .peerTooOld)
        // The other side sees us as too new for it.
        #expect(ours.compatibility(with: peer(1, 1)) == .peerTooNew)
    }

    @Test func peerTooNew() {
        #expect(peer(5, 4).compatibility(with: ours) == .peerTooNew)
        #expect(peer(UInt16.max, UInt16.max).compatibility(with: ours) == .peerTooNew)
        #expect(ours.compatibility(with: peer(5, 4)) == .peerTooOld)
    }

    @Test func overlappingRanges() {
        #expect(peer(5, 3).compatibility(with: ours) == .compatible(3))
        #expect(peer(5, 1).compatibility(with: ours) == .compatible(3))
        #expect(peer(2, 1).compatibility(with: ours) == .compatible(2))
        #expect(peer(2, 2).compatibility(with: ours) == .compatible(2))
        #expect(peer(UInt16.max, 0).compatibility(with: ours) == .compatible(3))
        // Both sides agree on the version.
        for p in [peer(5, 3), peer(5, 1), peer(2, 1), peer(3, 3), peer(3, 1)] {
            let theirs = ours.compatibility(with: p)
            #expect(p.compatibility(with: ours) == theirs, "\(p.version)/\(p.minimumVersion)")
            #expect(theirs == .compatible(min(p.version, ours.version)))
        }
    }

    @Test func exhaustiveSmallRanges() {
        // Against a brute-force definition: the highest version in both ranges.
        for ov in UInt16(0)...5 {
            for om in UInt16(0)...ov {
                let us = peer(ov, om)
                for pv in UInt16(0)...5 {
                    for pm in UInt16(0)...pv {
                        let got = peer(pv, pm).compatibility(with: us)
                        if max(om, pm) <= min(ov, pv) {
                            #expect(got == .compatible(min(ov, pv)), "us \(ov)/\(om) peer \(pv)/\(pm)")
                        } else if pv < om {
                            #expect(got == .peerTooOld, "us \(ov)/\(om) peer \(pv)/\(pm)")
                        } else {
                            #expect(got == .peerTooNew, "us \(ov)/\(om) peer \(pv)/\(pm)")
                        }
                    }
                }
            }
        }
    }
}

// MARK: - Framing

@Suite("PeerWire framing")
struct PeerWireFramingTests {
    private func makeChannel(maximumFrameBytes: Int, maximumBufferSize: Int? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let ops = channel.pipeline.syncOperations
        try ops.addHandler(ByteToMessageHandler(PeerFrameDecoder(maximumFrameBytes: maximumFrameBytes), maximumBufferSize: maximumBufferSize))
        try ops.addHandler(PeerFrameEncoder())
        return channel
    }

    private func buffer(_ bytes: [UInt8]) -> ByteBuffer { ByteBuffer(bytes: bytes) }

    private func readAll(_ channel: EmbeddedChannel) throws -> [PeerMessage] {
        var out: [PeerMessage] = []
        while let m = try channel.readInbound(as: PeerMessage.self) { out.append(m) }
        return out
    }

    @Test func encoderWritesLengthTypeBody() throws {
        let channel = try makeChannel(maximumFrameBytes: 1 << 20)
        for m in sampleMessages() {
            try channel.writeOutbound(m)
            let out = try #require(try channel.readOutbound(as: ByteBuffer.self))
            let bytes = Array(out.readableBytesView)
            let body = PeerMessageCoding.encode(m)
            #expect(bytes == lengthHeader(UInt32(body.count)) + body)
            #expect(bytes[4] == m.typeCode)
            #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        }
        try channel.writeOutbound(PeerMessage.subscribe)
        let sub = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(Array(sub.readableBytesView) == [0x00, 0x00, 0x00, 0x03, 0x02, 0x0A, 0x00])
        #expect(try channel.finish().isClean)
    }

    @Test func oneByteAtATime() throws {
        let channel = try makeChannel(maximumFrameBytes: 1 << 20)
        for m in sampleMessages() {
            try channel.writeOutbound(m)
            let out = try #require(try channel.readOutbound(as: ByteBuffer.self))
            let bytes = Array(out.readableBytesView)
            for (i, b) in bytes.enumerated() {
                try channel.writeInbound(buffer([b]))
                if i < bytes.count - 1 {
                    #expect(try channel.readInbound(as: PeerMessage.self) == nil, "message before byte \(i + 1) of \(bytes.count)")
                }
            }
            #expect(try readAll(channel) == [m])
        }
        #expect(try channel.finish().isClean)
    }

    @Test func twoFramesInOneBuffer() throws {
        let channel = try makeChannel(maximumFrameBytes: 1 << 20)
        let a = PeerMessage.hello(PeerHello(deviceName: "desk"))
        let b = PeerMessage.fetched(requestID: 9, .activity(everyFieldActivity(), stale: true))
        try channel.writeInbound(buffer(framed(a) + framed(b)))
        #expect(try readAll(channel) == [a, b])
        // Split awkwardly: the first frame and part of the second, then the rest with a third.
        let c = PeerMessage.subscribe
        let joined = framed(b) + framed(a) + framed(c)
        let cut = framed(b).count + 6
        try channel.writeInbound(buffer(Array(joined[..<cut])))
        #expect(try readAll(channel) == [b])
        try channel.writeInbound(buffer(Array(joined[cut...])))
        #expect(try readAll(channel) == [a, c])
        #expect(try channel.finish().isClean)
    }

    @Test func oversizedFrameIsRefusedFromItsHeader() throws {
        let cap = 64
        let channel = try makeChannel(maximumFrameBytes: cap)
        let header = lengthHeader(UInt32(cap + 1))
        for b in header.dropLast() {
            try channel.writeInbound(buffer([b]))  // an incomplete header is no error yet
        }
        let error = #expect(throws: PeerProtocolError.self) {
            try channel.writeInbound(buffer([header.last!]))
        }
        #expect(error?.code == "frame-too-large")
        #expect(try channel.readInbound(as: PeerMessage.self) == nil)
        _ = try? channel.finish()
    }

    @Test(arguments: [UInt32(65), 1 << 20, UInt32.max])
    func oversizedHeaderInOneWrite(length: UInt32) throws {
        let channel = try makeChannel(maximumFrameBytes: 64, maximumBufferSize: 68)
        let error = #expect(throws: PeerProtocolError.self) {
            try channel.writeInbound(buffer(lengthHeader(length) + [0x02]))
        }
        #expect(error?.code == "frame-too-large")
        _ = try? channel.finish()
    }

    @Test func zeroLengthFrameIsRefused() throws {
        let channel = try makeChannel(maximumFrameBytes: 64)
        let error = #expect(throws: PeerProtocolError.self) {
            try channel.writeInbound(buffer([0, 0, 0, 0] + framed(.subscribe)))
        }
        // PeerProtocol.md §7.7: `frame-too-large` is "a frame's length was 0 or above the cap".
        #expect(error?.code == "frame-too-large")
        #expect(try channel.readInbound(as: PeerMessage.self) == nil)
        _ = try? channel.finish()
    }

    @Test func frameExactlyAtTheCapIsAccepted() throws {
        let m = PeerMessage.error(code: "c", message: String(repeating: "é", count: 100))
        let size = PeerMessageCoding.encode(m).count
        // As the daemon sets it up: buffer cap = frame cap + the length header.
        let channel = try makeChannel(maximumFrameBytes: size, maximumBufferSize: size + 4)
        try channel.writeInbound(buffer(framed(m)))
        #expect(try readAll(channel) == [m])
        // Byte by byte too.
        for b in framed(m) { try channel.writeInbound(buffer([b])) }
        #expect(try readAll(channel) == [m])
        #expect(try channel.finish().isClean)

        // One byte less of cap and the same frame is refused.
        let tight = try makeChannel(maximumFrameBytes: size - 1)
        let error = #expect(throws: PeerProtocolError.self) {
            try tight.writeInbound(buffer(framed(m)))
        }
        #expect(error?.code == "frame-too-large")
        _ = try? tight.finish()
    }

    @Test func framesAtTheCapBackToBackWithTheDaemonsBufferLimit() throws {
        // PeerService.addFraming: buffer cap = frame cap + 4. Two full frames and part of a
        // third in one read must still go through.
        let m = PeerMessage.fetched(requestID: 1, .activity(everyFieldActivity(), stale: false))
        let cap = PeerMessageCoding.encode(m).count
        let channel = try makeChannel(maximumFrameBytes: cap, maximumBufferSize: cap + 4)
        let third = framed(.subscribe)
        try channel.writeInbound(buffer(framed(m) + framed(m) + third.prefix(2)))
        #expect(try readAll(channel) == [m, m])
        try channel.writeInbound(buffer(Array(third.dropFirst(2))))
        #expect(try readAll(channel) == [.subscribe])
        #expect(try channel.finish().isClean)
    }

    @Test func oversizedFrameAfterAGoodOne() throws {
        // The good frame is delivered; the oversized header after it errors at once.
        let channel = try makeChannel(maximumFrameBytes: 64)
        let error = #expect(throws: PeerProtocolError.self) {
            try channel.writeInbound(buffer(framed(.subscribe) + lengthHeader(1 << 30)))
        }
        #expect(error?.code == "frame-too-large")
        #expect(try readAll(channel) == [.subscribe])
        _ = try? channel.finish()
    }

    @Test func malformedFrameContentErrorsTheChannel() throws {
        let channel = try makeChannel(maximumFrameBytes: 1024)
        let error = #expect(throws: PeerProtocolError.self) {
            try channel.writeInbound(buffer(lengthHeader(3) + [0x0B, 0x0A, 0x00]))
        }
        #expect(error?.code == "malformed")
        let notHandoff = try makeChannel(maximumFrameBytes: 1024)
        let e2 = #expect(throws: PeerProtocolError.self) {
            try notHandoff.writeInbound(buffer(lengthHeader(5) + [0x01] + Array("HTTP".utf8)))
        }
        #expect(e2 == PeerProtocolError.notHandoff)
        _ = try? channel.finish()
        _ = try? notHandoff.finish()
    }

    @Test func roundTripThroughTwoChannels() throws {
        // What one side's encoder writes, the other side's decoder reads.
        let sender = try makeChannel(maximumFrameBytes: 1 << 20)
        let receiver = try makeChannel(maximumFrameBytes: 1 << 20)
        let messages = sampleMessages()
        for m in messages { try sender.writeOutbound(m) }
        while let out = try sender.readOutbound(as: ByteBuffer.self) { try receiver.writeInbound(out) }
        #expect(try readAll(receiver) == messages)
        #expect(try sender.finish().isClean)
        #expect(try receiver.finish().isClean)
    }
}

// MARK: - Docs/PeerProtocol.md §14.1

/// The frames of PeerProtocol.md §14.1, byte for byte: encoding them must give exactly
/// these bytes, and decoding them the message.
@Suite("PeerWire spec vectors")
struct PeerWireSpecVectorTests {
    private static let specID = ActivityID("464b7348fce4a6d65a4b38a909a42ca9")!

    private func hex(_ text: String) -> [UInt8] {
        text.split(separator: " ").map { UInt8($0, radix: 16)! }
    }

    private func check(_ m: PeerMessage, _ expected: String, count: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = hex(expected)
        #expect(bytes.count == count, sourceLocation: sourceLocation)
        #expect(framed(m) == bytes, sourceLocation: sourceLocation)
        #expect(try PeerMessageCoding.decode(Array(bytes.dropFirst(4))) == m, sourceLocation: sourceLocation)
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(PeerFrameDecoder(maximumFrameBytes: 1 << 20)))
        try channel.pipeline.syncOperations.addHandler(PeerFrameEncoder())
        try channel.writeOutbound(m)
        let out = try #require(try channel.readOutbound(as: ByteBuffer.self), sourceLocation: sourceLocation)
        #expect(Array(out.readableBytesView) == bytes, sourceLocation: sourceLocation)
        try channel.writeInbound(ByteBuffer(bytes: bytes))
        #expect(try channel.readInbound(as: PeerMessage.self) == m, sourceLocation: sourceLocation)
        #expect(try channel.finish().isClean, sourceLocation: sourceLocation)
    }

    @Test func subscribeAndEmptyOffer() throws {
        try check(.subscribe, "00 00 00 03 02 0a 00", count: 7)
        try check(.offer(nil), "00 00 00 03 03 0a 00", count: 7)
    }

    @Test func hello() throws {
        try check(.hello(PeerHello(version: 1, minimumVersion: 1, deviceName: "ann-desktop")),
            "00 00 00 23 01 48 4e 44 46 00 01 00 01 0a 01 0a 64 65 76 69 63 65 4e 61 6d 65 05 0b 61 6e 6e 2d 64 65 73 6b 74 6f 70",
            count: 39)
    }

    @Test func fetchAndContinued() throws {
        try check(.fetch(requestID: 1, activityID: Self.specID),
            "00 00 00 3c 04 0a 02 0a 61 63 74 69 76 69 74 79 49 44 05 20 34 36 34 62 37 33 34 38 66 63 65 34 61 36 64 36 35 61 34 62 33 38 61 39 30 39 61 34 32 63 61 39 09 72 65 71 75 65 73 74 49 44 03 02",
            count: 64)
        try check(.continued(activityID: Self.specID),
            "00 00 00 30 06 0a 01 0a 61 63 74 69 76 69 74 79 49 44 05 20 34 36 34 62 37 33 34 38 66 63 65 34 61 36 64 36 35 61 34 62 33 38 61 39 30 39 61 34 32 63 61 39",
            count: 52)
    }

    @Test func fetchedFailure() throws {
        try check(.fetched(requestID: 1, .failure(code: "not-offered", message: "gone")),
            "00 00 00 39 05 0a 03 09 65 72 72 6f 72 43 6f 64 65 05 0b 6e 6f 74 2d 6f 66 66 65 72 65 64 0c 65 72 72 6f 72 4d 65 73 73 61 67 65 05 04 67 6f 6e 65 09 72 65 71 75 65 73 74 49 44 03 02",
            count: 61)
    }

    @Test func offer() throws {
        let at = Timestamp(seconds: 1_795_304_545, nanoseconds: 590_751_029)
        let activity = Activity(
            id: Self.specID, activityType: "com.example.editor.edit-note", title: "Shopping list",
            webpageURL: "https://notes.example.com/n/42", createdAt: at, origin: DeviceRef(name: "ann-desktop"))
        try check(.offer(ActivitySummary(activity, payloadSize: 624)), """
            00 00 01 17 03 0a 01 08 61 63 74 69 76 69 74 79 0a 0a 0c 61 63 74 69 76 69 74 79 54 79 70 65 05 \
            1c 63 6f 6d 2e 65 78 61 6d 70 6c 65 2e 65 64 69 74 6f 72 2e 65 64 69 74 2d 6e 6f 74 65 09 63 72 \
            65 61 74 65 64 41 74 07 c2 b1 91 b0 0d b5 ca d8 99 02 02 69 64 05 20 34 36 34 62 37 33 34 38 66 \
            63 65 34 61 36 64 36 35 61 34 62 33 38 61 39 30 39 61 34 32 63 61 39 09 6e 65 65 64 73 53 61 76 \
            65 01 0a 6f 72 69 67 69 6e 4e 61 6d 65 05 0b 61 6e 6e 2d 64 65 73 6b 74 6f 70 0b 70 61 79 6c 6f \
            61 64 53 69 7a 65 03 e0 09 1b 73 75 70 70 6f 72 74 73 43 6f 6e 74 69 6e 75 61 74 69 6f 6e 53 74 \
            72 65 61 6d 73 01 05 74 69 74 6c 65 05 0d 53 68 6f 70 70 69 6e 67 20 6c 69 73 74 09 75 70 64 61 \
            74 65 64 41 74 07 c2 b1 91 b0 0d b5 ca d8 99 02 0a 77 65 62 70 61 67 65 55 52 4c 08 1e 68 74 74 \
            70 73 3a 2f 2f 6e 6f 74 65 73 2e 65 78 61 6d 70 6c 65 2e 63 6f 6d 2f 6e 2f 34 32
            """, count: 283)
    }
}
