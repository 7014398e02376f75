import HandoffCore
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOEmbedded
import Testing

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
