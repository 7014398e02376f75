import HandoffPeerProtocol
import HandoffStreamFrames
import NIOCore

/// Sends a stream's chunks to the peer as data frames with at most two chunks between the
/// source and the socket: the one being written and one queued behind it.
///
/// A channel's asynchronous writer holds back only when the channel says it is not
/// writable, and the channel learns that only once the event loop has written. A source
/// read on another thread (a file, on the thread pool) is quicker than TLS on the event
/// loop; when the two share one CPU the reads ran ahead, and the chunks waiting in the
/// writer's buffer held hundreds of MiB of the origin's memory (Docs/Performance.md,
/// "A stream's chunks waited in memory"). Here each chunk's write is awaited before the one
/// after the next is read, so reading and writing still overlap by one chunk.
struct PeerDataWriter {
    private let channel: Channel
    private var previous: EventLoopFuture<Void>?

    init(channel: Channel) { self.channel = channel }

    /// Queues `chunk`'s data frames and flushes them, then waits until the chunk before it
    /// is on the socket. Throws what the connection met.
    mutating func send(_ chunk: ByteBuffer) async throws {
        let frames = StreamFrame.dataFrames(of: chunk)
        guard let last = frames.last else { return }
        let channel = self.channel
        let written = channel.eventLoop.flatSubmit {
            for frame in frames.dropLast() { channel.write(PeerMessage.stream(frame), promise: nil) }
            return channel.writeAndFlush(PeerMessage.stream(last))
        }
        let before = previous
        previous = written
        try await before?.get()
    }

    /// Waits until everything sent is on the socket.
    mutating func drain() async throws {
        let last = previous
        previous = nil
        try await last?.get()
    }
}
