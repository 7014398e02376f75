import HandoffSystem
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// The origin side of a stream for an activity without an app (`--stream-file`): the
/// daemon sends the file's bytes, read when the stream opens, and discards what the
/// continuing side sends. Reads happen on NIO's thread pool, one chunk ahead of the socket
/// at most (`PeerDataWriter`).
enum StreamFileServer {
    /// 1 MiB per read, sent as four data frames of the protocol's preferred size in one
    /// write: a quarter of the pool hops and writer wake-ups of 256 KiB reads, which cost
    /// the origin about a third more CPU per GB (Docs/Performance.md).
    static let chunkBytes = 4 * StreamFrame.preferredDataBytes

    /// Opens the file now (the stream is opening); its size is announced to the peer.
    /// O_NONBLOCK: a FIFO put where the file was must not block the opening thread (it is
    /// then refused as not a regular file; reads of a regular file ignore the flag).
    static func open(_ path: String, followLinks: Bool = true) throws(StreamFailure) -> (fd: CInt, size: Int64) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else {
            throw StreamFailure("stream_unavailable", "the stream's file cannot be read on the origin: \(path): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw StreamFailure("stream_unavailable", "the stream's file on the origin is not a regular file any more: \(path)")
        }
        return (fd, Int64(st.st_size))
    }

    /// Sends the file and reads the other direction until both have ended; closes `fd`.
    static func run(fd: CInt, path: String, peerMessages: inout StreamRelay.PeerMessages, peerOut: NIOAsyncChannelOutboundWriter<PeerMessage>,
                    peerChannel: Channel, peerName: String, state: StreamRelay.State) async -> StreamFailure? {
        defer { close(fd) }
        return await serve(peerMessages: &peerMessages, peerOut: peerOut, peerChannel: peerChannel, peerName: peerName, state: state) { send in
            try await readAll(fd, allocator: peerChannel.allocator, naming: path, send)
        }
    }

    /// The same for bytes handoffd holds (a copy made with `handoffctl copy`).
    static func run(bytes: [UInt8], peerMessages: inout StreamRelay.PeerMessages, peerOut: NIOAsyncChannelOutboundWriter<PeerMessage>,
                    peerChannel: Channel, peerName: String, state: StreamRelay.State) async -> StreamFailure? {
        await serve(peerMessages: &peerMessages, peerOut: peerOut, peerChannel: peerChannel, peerName: peerName, state: state) { send in
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + chunkBytes)
                try await send(peerChannel.allocator.buffer(bytes: bytes[offset..<end]))
                offset = end
            }
        }
    }

    /// Sends what `produce` gives, then `end`, while reading the other direction as a
    /// relay reads it, with nowhere to deliver to.
    private static func serve(peerMessages: inout StreamRelay.PeerMessages, peerOut: NIOAsyncChannelOutboundWriter<PeerMessage>, peerChannel: Channel,
                              peerName: String, state: StreamRelay.State,
                              _ produce: @escaping @Sendable (_ send: (ByteBuffer) async throws -> Void) async throws -> Void) async -> StreamFailure? {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await send(peerOut: peerOut, peerChannel: peerChannel, peerName: peerName, state: state, produce) }
            await StreamRelay.peerToApp(&peerMessages, app: nil, peerChannel: peerChannel, peerName: peerName, state: state)
            if state.failure != nil {
                group.cancelAll()
                peerChannel.close(promise: nil)
            }
            await group.waitForAll()
        }
        return state.failure
    }

    /// Reads a regular file from its offset to its end, `chunkBytes` at a time on the
    /// thread pool, one read ahead of `send` at most. A failed read is `stream_unavailable`.
    static func readAll(_ fd: CInt, allocator: ByteBufferAllocator, naming what: String,
                        _ send: (ByteBuffer) async throws -> Void) async throws {
        while true {
            let chunk: ByteBuffer
            do {
                chunk = try await NIOThreadPool.singleton.runIfActive { try ByteBuffer.readChunk(from: fd, upTo: chunkBytes, allocator: allocator) }
            } catch let e as ReadFailure {
                throw StreamFailure("stream_unavailable", "reading \(what) on the origin failed: \(e.reason)")
            }
            if chunk.readableBytes == 0 { return }
            try await send(chunk)
        }
    }

    private static func send(peerOut: NIOAsyncChannelOutboundWriter<PeerMessage>, peerChannel: Channel, peerName: String, state: StreamRelay.State,
                             _ produce: (_ send: (ByteBuffer) async throws -> Void) async throws -> Void) async {
        do {
            var writer = PeerDataWriter(channel: peerChannel)
            try await produce { chunk in
                try await writer.send(chunk)
                state.add(toPeer: chunk.readableBytes)
            }
            try await writer.drain()
            state.appEnded()
            try await peerChannel.writeAndFlush(PeerMessage.stream(.end)).get()
        } catch let f as StreamFailure {
            if state.fail(f) { await StreamRelay.sendLast(f.peerFrame, on: peerChannel) }
            peerChannel.close(promise: nil)
        } catch is CancellationError {
        } catch {
            _ = state.fail(StreamFailure("peer_gone", "the connection to \(peerName) broke during the stream"))
            peerChannel.close(promise: nil)
        }
    }
}
