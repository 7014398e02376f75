@testable import HandoffDaemon
import HandoffPeerProtocol
import HandoffStreamFrames
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import HandoffTestSupport
import Testing

/// `PeerDataWriter` keeps at most two chunks between the source and the socket: a send
/// returns only once the chunk before it is written.
struct PeerDataWriterTests {
    /// Keeps every write's promise until the test completes it, as a socket that has not
    /// taken the bytes yet would.
    final class HeldWrites: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = PeerMessage
        let held = NIOLockedValueBox<[(bytes: Int, promise: EventLoopPromise<Void>?)]>([])

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard case .stream(.data(let b)) = unwrapOutboundIn(data) else { return }
            held.withLockedValue { $0.append((b.readableBytes, promise)) }
        }

        func flush(context: ChannelHandlerContext) {}

        /// Completes the held writes that add up to `bytes`, in order.
        func complete(_ bytes: Int) {
            let due = held.withLockedValue { h -> [EventLoopPromise<Void>?] in
                var total = 0, n = 0
                while n < h.count, total < bytes { total += h[n].bytes; n += 1 }
                defer { h.removeFirst(n) }
                return h[..<n].map(\.promise)
            }
            for p in due { p?.succeed() }
        }

        var heldBytes: Int { held.withLockedValue { $0.reduce(0) { $0 + $1.bytes } } }
    }

    @Test func aSendWaitsForTheChunkBeforeIt() async throws {
        let holder = HeldWrites()
        let channel = NIOAsyncTestingChannel()
        try await channel.pipeline.addHandler(holder)
        let chunk = ByteBuffer(repeating: 7, count: 600 * 1024)  // three data frames
        let sent = NIOLockedValueBox(0)
        let task = Task {
            var writer = PeerDataWriter(channel: channel)
            for _ in 0..<3 {
                try await writer.send(chunk)
                sent.withLockedValue { $0 += 1 }
            }
            try await writer.drain()
            sent.withLockedValue { $0 += 1 }
        }
        // The first send returns at once; the second writes its chunk, then waits for the first.
        try await eventually("two chunks written") { holder.heldBytes == 2 * chunk.readableBytes }
        try await never(within: 0.05, because: "a second send returned, or a third chunk went out, before the first chunk was written") {
            sent.withLockedValue { $0 } != 1 || holder.heldBytes != 2 * chunk.readableBytes
        }

        holder.complete(chunk.readableBytes)
        try await eventually("the third chunk written") { holder.heldBytes == 2 * chunk.readableBytes && sent.withLockedValue { $0 } == 2 }
        try await never(within: 0.05, because: "the third send returned before the second chunk was written") { sent.withLockedValue { $0 } != 2 }

        holder.complete(chunk.readableBytes)
        try await eventually("the third send returned") { sent.withLockedValue { $0 } == 3 }
        try await never(within: 0.05, because: "drain returned before the last chunk was written") { sent.withLockedValue { $0 } != 3 }
        holder.complete(chunk.readableBytes)
        try await task.value
        #expect(sent.withLockedValue { $0 } == 4)
        // A testing channel left open keeps its pipeline alive (LeakSanitizer says so).
        _ = try await channel.finish(acceptAlreadyClosed: true)
    }

    @Test func aFailedWriteIsThrown() async throws {
        let channel = NIOAsyncTestingChannel()
        try await channel.close()
        var writer = PeerDataWriter(channel: channel)
        try await writer.send(ByteBuffer(repeating: 1, count: 10))
        await #expect(throws: (any Error).self) { try await writer.drain() }
    }
}
