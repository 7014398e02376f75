import HandoffCore
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOEmbedded
import Testing

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
