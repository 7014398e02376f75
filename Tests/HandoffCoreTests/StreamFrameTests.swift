import HandoffCore
import HandoffControlAPI
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOEmbedded
import Testing

/// Continuation stream frames: the same framing as peer messages, data passed as slices.
@Suite("Stream frames")
struct StreamFrameTests {
    private func channel(maximumFrameBytes: Int = 1024) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(StreamFrameDecoder(maximumFrameBytes: maximumFrameBytes)))
        try channel.pipeline.syncOperations.addHandler(StreamFrameEncoder())
        return channel
    }

    private func encoded(_ frame: StreamFrame, _ channel: EmbeddedChannel) throws -> [UInt8] {
        try channel.writeOutbound(frame)
        var bytes: [UInt8] = []
        while let b = try channel.readOutbound(as: ByteBuffer.self) { bytes += b.readableBytesView }
        return bytes
    }

    private func joined(_ frames: [StreamFrame]) -> [StreamFrame] {
        var out: [StreamFrame] = []
        for f in frames {
            if case .data(var more) = f, case .data(var last)? = out.last {
                last.writeBuffer(&more)
                out[out.count - 1] = .data(last)
            } else {
                out.append(f)
            }
        }
        return out
    }

    @Test func layout() throws {
        let c = try channel()
        #expect(try encoded(.data(ByteBuffer(bytes: [0xAA, 0xBB])), c) == [0, 0, 0, 3, 0x10, 0xAA, 0xBB])
        #expect(try encoded(.end, c) == [0, 0, 0, 1, 0x11])
        let error = try encoded(.error(code: "peer_gone", message: "x"), c)
        #expect(Array(error.prefix(5)) == [0, 0, 0, UInt8(error.count - 4), 0x12])
        #expect(String(decoding: error.dropFirst(5), as: UTF8.self) == #"{"code":"peer_gone","message":"x"}"#)
        let written = try encoded(.written(5_000_000), c)
        #expect(Array(written.prefix(5)) == [0, 0, 0, UInt8(written.count - 4), 0x14])
        #expect(String(decoding: written.dropFirst(5), as: UTF8.self) == #"{"bytes":5000000}"#)
        #expect(try c.finish().isClean)
    }

    @Test func roundTripOneByteAtATime() throws {
        let frames: [StreamFrame] = [
            .open(["activityID": .string("ab"), "length": .integer(12), "device": .object(["name": .string("désk")])]),
            .data(ByteBuffer(bytes: Array(0...255))), .data(ByteBuffer(bytes: [0])), .end,
            .error(code: "stream_refused", message: "nö \u{0}"), .written(0), .written(1 << 40),
        ]
        let c = try channel()
        var wire: [UInt8] = []
        for f in frames { wire += try encoded(f, c) }
        var got: [StreamFrame] = []
        for b in wire {
            try c.writeInbound(ByteBuffer(bytes: [b]))
            while let f = try c.readInbound(as: StreamFrame.self) { got.append(f) }
        }
        // Data is passed on as it arrives (here a byte at a time), and frame boundaries
        // carry no meaning: compare with consecutive data joined.
        #expect(got.count > frames.count)
        #expect(joined(got) == joined(frames))
        #expect(try c.finish().isClean)
    }

    @Test func hostileFramesAreRefused() throws {
        let cases: [([UInt8], String)] = [
            ([0, 0, 0, 0], "frame-too-large"),                  // zero length
            ([0, 0, 4, 1], "frame-too-large"),                  // over the 1024-byte cap, refused before buffering
            ([0, 0, 0, 1, 0x10], "malformed"),                  // empty data
            ([0, 0, 0, 2, 0x11, 0], "malformed"),               // end with a body
            ([0, 0, 0, 3, 0x12, 0x7B, 0x7D], "malformed"),      // error without code and message
            ([0, 0, 0, 2, 0x13, 0x5B], "malformed"),            // open that is not JSON
            ([0, 0, 0, 3, 0x14, 0x7B, 0x7D], "malformed"),      // written without bytes
            ([0, 0, 0, 13, 0x14] + Array(#"{"bytes":-1}"#.utf8), "malformed"),  // a negative count
            ([0, 0, 0, 1, 0x03], "malformed"),                  // a peer message on a stream
        ]
        for (bytes, code) in cases {
            let c = try channel()
            let error = #expect(throws: PeerProtocolError.self, "\(bytes)") { try c.writeInbound(ByteBuffer(bytes: bytes)) }
            #expect(error?.code == code, "\(bytes)")
            _ = try? c.finish()
        }
    }

    /// On a peer connection the same frames decode as `PeerMessage.stream`, data as a
    /// slice of what was read.
    @Test func peerDecoderPassesStreamFrames() throws {
        let c = EmbeddedChannel()
        try c.pipeline.syncOperations.addHandler(ByteToMessageHandler(PeerFrameDecoder(maximumFrameBytes: 1 << 20)))
        try c.pipeline.syncOperations.addHandler(PeerFrameEncoder())
        let payload = ByteBuffer(bytes: Array(repeating: 0x5A, count: 100_000))
        for m: PeerMessage in [.streamOpen(activityID: ActivityID.random()), .streamAccepted(length: 100_000), .stream(.data(payload)), .stream(.end)] {
            try c.writeOutbound(m)
            var wire = ByteBuffer()
            while var b = try c.readOutbound(as: ByteBuffer.self) { wire.writeBuffer(&b) }
            try c.writeInbound(wire)
            #expect(try c.readInbound(as: PeerMessage.self) == m)
        }
        // The open and written frames belong to the control socket only.
        #expect(throws: PeerProtocolError.self) { try c.writeInbound(ByteBuffer(bytes: [0, 0, 0, 3, 0x13, 0x7B, 0x7D])) }
        _ = try? c.finish()
        let d = EmbeddedChannel()
        try d.pipeline.syncOperations.addHandler(ByteToMessageHandler(PeerFrameDecoder(maximumFrameBytes: 1 << 20)))
        #expect(throws: PeerProtocolError.self) { try d.writeInbound(ByteBuffer(bytes: [0, 0, 0, 12, 0x14] + Array(#"{"bytes":1}"#.utf8))) }
        _ = try? d.finish()
    }

    @Test func percentEncodingOfPaths() {
        let paths = ["/home/me/Film 1.mkv", "/tmp/a&b=c?d#e%f", "/home/ünï/日本.txt", "/x/.handoff-Xa81Qz", "/"]
        for p in paths {
            let e = PercentEncoding.encode(p)
            #expect(!e.contains(" ") && !e.contains("&") && !e.contains("?") && !e.contains("#"), "\(e)")
            #expect(e.unicodeScalars.allSatisfy { $0.isASCII }, "\(e)")
            #expect(PercentEncoding.decode(Substring(e)) == p)
        }
        #expect(PercentEncoding.encode("/a b") == "/a%20b")
        #expect(PercentEncoding.decode("%2fetc%2Fpasswd") == "/etc/passwd")
        for bad in ["%", "%4", "%G0", "abc%", "%FF%FE"] { #expect(PercentEncoding.decode(Substring(bad)) == nil, "\(bad)") }
        #expect(ControlEndpoint.openStreamPath(activity: "ab", document: true, into: "/t/x y") == "/v1/streams?activity=ab&document=1&into=/t/x%20y")
    }
}
