import HandoffCore
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOEmbedded
import Testing

// Fixtures the PeerWire suites share.

let idA = ActivityID("0123456789abcdef0123456789abcdef")!
let idB = ActivityID("ffffffffffffffffffffffffffffffff")!

/// An activity with every optional field unset and every flag at its default.
func minimalActivity() -> Activity {
    Activity(id: idB, activityType: "a.b", createdAt: Timestamp(seconds: 0), origin: DeviceRef(name: ""))
}

/// An activity at the edges of what a date may be, with the flags opposite to
/// `everyFieldActivity()`.
func edgeActivity() -> Activity {
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

func fullSummary() -> ActivitySummary {
    let s = ActivitySummary(everyFieldActivity(), payloadSize: 123_456)
    // Precondition of the fixture: every optional is set.
    precondition(s.expirationDate != nil && s.webpageURL != nil)
    return s
}

func bareSummary() -> ActivitySummary {
    let s = ActivitySummary(minimalActivity(), payloadSize: 0)
    precondition(s.expirationDate == nil && s.webpageURL == nil)
    return s
}

/// One of every message, with edge values: the corpus for round trips, truncations and
/// mutation fuzzing.
func sampleMessages() -> [PeerMessage] {
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
func framed(_ m: PeerMessage) -> [UInt8] {
    let bytes = PeerMessageCoding.encode(m)
    let n = UInt32(bytes.count)
    return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + bytes
}

func lengthHeader(_ n: UInt32) -> [UInt8] {
    [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
}

/// A message of `type` whose body is `body` in the binary encoding.
func raw(_ type: UInt8, _ body: PropertyValue) -> [UInt8] {
    [type] + PropertyBinaryEncoding.encode(body)
}

let helloMagic: [UInt8] = Array("HNDF".utf8)

/// Expects `bytes` to be refused with `code`.
func expectRejected(
    _ bytes: [UInt8], code: String = "malformed", _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let m = try PeerMessageCoding.decode(bytes)
        Issue.record("expected \(code), decoded \(m) \(comment.map { "(\($0))" } ?? "")", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == code, comment, sourceLocation: sourceLocation)
    }
}

func expectAccepted(
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
func fetchedBody(_ a: Activity = everyFieldActivity(), stale: Bool = false) -> [String: PropertyValue] {
    ["requestID": .integer(9), "activity": ActivityPropertyList.encode(a), "stale": .boolean(stale)]
}

func activityDictionary(_ a: Activity = everyFieldActivity()) -> [String: PropertyValue] {
    guard case .dictionary(let d) = ActivityPropertyList.encode(a) else { fatalError("not a dictionary") }
    return d
}

func summaryDictionary(_ s: ActivitySummary = fullSummary()) -> [String: PropertyValue] {
    guard case .dictionary(let d) = s.propertyList else { fatalError("not a dictionary") }
    return d
}

func containsNaN(_ v: PropertyValue) -> Bool {
    switch v {
    case .double(let d): d.isNaN
    case .array(let items), .set(let items): items.contains(where: containsNaN)
    case .dictionary(let d): d.values.contains(where: containsNaN)
    default: false
    }
}

func containsNaN(_ m: PeerMessage) -> Bool {
    if case .fetched(_, .activity(let a, _)) = m { return a.userInfo.values.contains(where: containsNaN) }
    return false
}
