import HandoffCore
import HandoffSystem
import Logging
import NIOCore
import NIOEmbedded
import Testing
@testable import HandoffKDEConnect
@testable import KDEConnectProgram

/// The endpoint's parts that decide without a network: what a share becomes, what is sent
/// to a device, the lines between handoffd and the endpoint, the line framing's limit, and
/// the log that a flood cannot flood. The endpoint itself is tested against kdeconnectd
/// (KDEConnectTests) and an attacker (KDEConnectHostileTests).
@Suite("KDE Connect endpoint parts")
struct KDEConnectEndpointPartsTests {
    func share(_ body: JSONObject, payload: KDEConnectPacket.Payload? = nil) -> ActivityDraft? {
        ShareToActivity.draft(KDEConnectPacket(type: "kdeconnect.share.request", body: body, payload: payload), from: "phone")
    }

    @Test func aSharedPageIsAWebActivityAndAnythingElseText() throws {
        let page = try #require(share(["url": .string("https://example.org/a")]))
        #expect(page.activityType == WellKnownActivityType.browsingWeb && page.webpageURL == "https://example.org/a" && page.title == "Shared from phone")
        let tel = try #require(share(["url": .string("tel:+123")]))
        #expect(tel.activityType == WellKnownActivityType.text && tel.userInfo["text"] == .string("tel:+123") && tel.webpageURL == nil)
        let text = try #require(share(["text": .string("hello")]))
        #expect(text.activityType == WellKnownActivityType.text && text.requiredUserInfoKeys == ["text"])
        #expect(share([:]) == nil && share(["text": .string("")]) == nil)
        #expect(share(["filename": .string("a.jpg")], payload: .init(size: 10, port: 1739)) == nil, "files are not taken yet")
        // A URL over the limit of an activity's URL is kept as text, and text is cut whole
        // characters at a time to fit an activity.
        let long = try #require(share(["url": .string("https://example.org/" + String(repeating: "a", count: 9000))]))
        #expect(long.activityType == WellKnownActivityType.text)
        let huge = try #require(share(["text": .string(String(repeating: "é", count: 100_000))]))
        guard case .string(let kept)? = huge.userInfo["text"] else { Issue.record("no text"); return }
        #expect(kept.utf8.count <= ShareToActivity.textLimit && kept.utf8.count > ShareToActivity.textLimit - 2 && kept.allSatisfy { $0 == "é" })
    }

    func activity(_ type: String, url: String? = nil, info: UserInfo = [:]) -> Activity {
        var d = ActivityDraft(activityType: type)
        d.webpageURL = url
        d.userInfo = info
        return d.makeActivity(id: .random(), now: Timestamp(seconds: 1_765_000_000), origin: DeviceRef(name: "ws", id: "x"))
    }

    @Test func whatIsSentToADeviceIsThePageElseTheText() throws {
        let page = try ShareToDevice(activity("a.b", url: "https://example.org/p"))
        #expect(page.packet.body == ["url": .string("https://example.org/p")])
        let text = try ShareToDevice(activity(WellKnownActivityType.text, info: ["text": .string("t")]))
        #expect(text.packet.body == ["text": .string("t")] && text.packet.type == "kdeconnect.share.request")
        let media = try ShareToDevice(activity(WellKnownActivityType.media, info: ["url": .url("https://example.org/song.ogg")]))
        #expect(media.url == "https://example.org/song.ogg")
        #expect(throws: HandoffError.self) { try ShareToDevice(activity("app.editor", info: ["file": .string("/x")])) }
        #expect(throws: HandoffError.self) { try ShareToDevice(activity(WellKnownActivityType.media, info: ["url": .url("file:///home/u/song.ogg")])) }
    }

    @Test func bridgeLinesRoundTripAndDamagedOnesAreRefused() throws {
        let lines: [KDEConnectBridgeLine] = [
            .request(id: 1, op: "status", fields: [:]),
            .request(id: 2, op: "pair", fields: ["device": .string("phone")]),
            .reply(id: 3, result: .success(.object(["a": .integer(1)]))),
            .reply(id: 4, result: .failure(HandoffError(.unavailable, code: "unreachable", message: "not now"))),
            .notice("pairing-requested", ["device": .object(["id": .string("x")])]),
        ]
        for line in lines {
            let bytes = line.encoded
            #expect(bytes.last == 10)
            #expect(try KDEConnectBridgeLine(parsing: bytes.dropLast()) == line)
        }
        for bad in ["", "[]", "{}", "{\"id\": \"1\"}", "{\"id\": 1}", "{\"id\": 1, \"error\": {}}", "not json"] {
            #expect(throws: KDEConnectError.self) { try KDEConnectBridgeLine(parsing: Array(bad.utf8)) }
        }
        #expect(throws: KDEConnectError.self) { try KDEConnectBridgeLine(parsing: [UInt8](repeating: 32, count: KDEConnectBridgeLine.limit + 1)) }
    }

    @Test func aLineOverItsLimitClosesAndTheLimitCanRise() throws {
        let limit = LineLimit(16)
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(CappedLineDecoder(limit: limit)))
        try channel.writeInbound(ByteBuffer(string: "short\nsecond li"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "short"))
        try channel.writeInbound(ByteBuffer(string: "ne\n"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "second line"))
        limit.bytes = 64
        try channel.writeInbound(ByteBuffer(string: String(repeating: "x", count: 40) + "\n"))
        #expect(try channel.readInbound(as: ByteBuffer.self)?.readableBytes == 40)
        // Over the limit without a newline: refused before the newline comes.
        #expect(throws: LineTooLong.self) { try channel.writeInbound(ByteBuffer(string: String(repeating: "y", count: 65))) }
    }

    @Test func aFloodOfRefusalsIsLoggedTenAtATimeAndCounted() {
        let recorder = LogRecorder()
        let log = Logger(label: "test") { _ in recorder }
        var refusals = RefusalLog()
        let t0 = Timestamp(seconds: 1_765_000_000)
        for i in 0..<1000 { refusals.refused("closing", ["n": "\(i)"], at: t0.adding(nanoseconds: Int64(i) * 1_000_000), log) }
        for i in 0..<5 { refusals.refused("refusing", ["n": "\(i)"], at: t0, log) }
        #expect(recorder.lines.filter { $0 == "closing" }.count == 10 && recorder.lines.filter { $0 == "refusing" }.count == 5)
        refusals.refused("closing", [:], at: t0.adding(nanoseconds: 11_000_000_000), log)
        #expect(recorder.lines.suffix(2) == ["and more like it, not logged one by one", "closing"])
        #expect(recorder.events.last(where: { $0["count"] != nil })?["count"] == "990")
    }
}

/// A log handler that keeps what it was given.
final class LogRecorder: LogHandler, @unchecked Sendable {
    var lines: [String] = []
    var events: [Logger.Metadata] = []
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        lines.append(event.message.description)
        events.append(event.metadata ?? [:])
    }
}
