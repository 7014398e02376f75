@testable import HandoffDaemon
import HandoffStreamFrames
import NIOCore
import Testing

/// The origin reads a stream's file 1 MiB at a time but sends data frames of the
/// protocol's preferred size (PeerProtocol.md §7.10): each read becomes slices, in order
/// (`StreamFrame.dataFrames`, which the client library's writer uses too).
@Suite("Stream file server")
struct StreamFileServerTests {
    func payloads(_ frames: [StreamFrame]) -> [[UInt8]] {
        frames.map { m in
            guard case .data(let b) = m else { Issue.record("not a data frame: \(m)"); return [] }
            return Array(b.readableBytesView)
        }
    }

    @Test func aFullReadBecomesFourFramesOfThePreferredSize() {
        let bytes = (0..<StreamFileServer.chunkBytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let frames = payloads(StreamFrame.dataFrames(of: ByteBuffer(bytes: bytes)))
        #expect(StreamFileServer.chunkBytes == 4 * StreamFrame.preferredDataBytes)
        #expect(frames.map(\.count) == Array(repeating: StreamFrame.preferredDataBytes, count: 4))
        #expect(frames.flatMap { $0 } == bytes)
    }

    @Test func aShortReadKeepsItsTail() {
        let n = StreamFrame.preferredDataBytes + 12_345
        let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let frames = payloads(StreamFrame.dataFrames(of: ByteBuffer(bytes: bytes)))
        #expect(frames.map(\.count) == [StreamFrame.preferredDataBytes, 12_345])
        #expect(frames.flatMap { $0 } == bytes)
        #expect(payloads(StreamFrame.dataFrames(of: ByteBuffer(bytes: [9]))) == [[9]])
        #expect(StreamFrame.dataFrames(of: ByteBuffer()).isEmpty)
    }
}
