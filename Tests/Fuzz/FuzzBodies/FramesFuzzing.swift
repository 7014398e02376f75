import HandoffCore
#if canImport(Glibc)
import Glibc
#endif
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOEmbedded

/// Byte streams as they arrive on a socket, cut anywhere: the peer framing and the
/// continuation-stream framing, each in an embedded channel. The first byte chooses the
/// decoder and how the input is split into reads.
public enum FramesFuzzing {
    /// One input: a broken invariant is reported through `fuzzCheck` (a crash under libFuzzer).
    public static func test(_ bytes: [UInt8]) {
        guard bytes.count > 1 else { return }
        let control = bytes[0]
        let bytes = Array(bytes.dropFirst())
        let channel = EmbeddedChannel()
        let max = 1 << 16
        do {
            if control & 1 == 0 {
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(PeerFrameDecoder(maximumFrameBytes: max), maximumBufferSize: max + 4))
            } else {
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(StreamFrameDecoder(maximumFrameBytes: max), maximumBufferSize: max + 4))
            }
            let chunk = Int(control >> 1) + 1
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + chunk)
                try channel.writeInbound(ByteBuffer(bytes: bytes[offset..<end]))
                offset = end
                while let _: PeerMessage = try? channel.readInbound() {}
                while let _: StreamFrame = try? channel.readInbound() {}
            }
        } catch {
            // A protocol error closes the connection: the expected answer to junk.
        }
        _ = try? channel.finish()
    }

    /// Valid inputs made by the real encoders: the seed corpus (`TARGET --write-seeds DIR`).
    public static func seeds() -> [[UInt8]] {
        let a = FuzzSeeds.activity()
        func framed(_ m: PeerMessage) -> [UInt8] {
            let body = PeerMessageCoding.encode(m)
            let n = UInt32(body.count)
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body
        }
        return [[0x00] + framed(.hello(PeerHello(deviceName: "desk"))) + framed(.subscribe) + framed(.offer(ActivitySummary(a, payloadSize: 100))),
                [0x07] + framed(.fetch(requestID: 9, activityID: a.id)) + framed(.error(code: "x", message: "y")),
                [0x01, 0, 0, 0, 5, 0x10, 1, 2, 3, 4, 0, 0, 0, 1, 0x11], [0x0F, 0, 0, 0, 3, 0x12, 0x41, 0x42],
                [0x03, 0, 0, 0, 13, 0x14] + Array(#"{"bytes":42}"#.utf8) + [0, 0, 0, 1, 0x11]]
    }
}
