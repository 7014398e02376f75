import HandoffSystem
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// The origin side of a stream whose app handed over its source and sink (§15.8): the
/// source's bytes go to the peer and the peer's into the sink without passing through the
/// app, which keeps only the verdict. The peer hears `end` once the source reached its end
/// *and* the app sent `end` (a command's exit status decides, say); an app's `error`, or
/// its connection closing first, fails the stream as in `StreamRelay`.
enum HandedOverRelay {
    typealias Pipe = NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// Pipe reads of up to 1 MiB: what a pipe whose buffer was raised to 1 MiB can hold.
    static let readBytes = 1 << 20

    static func run(app: AppStreamEnd, descriptors d: HandedOverDescriptors, peerMessages: inout StreamRelay.PeerMessages,
                    peerOut: NIOAsyncChannelOutboundWriter<PeerMessage>, peerChannel: Channel, peerName: String,
                    state: StreamRelay.State) async -> StreamFailure? {
        let loop = peerChannel.eventLoop
        var sourcePipe: Pipe?
        var sinkPipe: Channel?
        var (sourceGiven, sinkGiven) = (false, false)
        do {
            if d.sourceKind == .stream {
                raisePipeBuffer(d.source)
                sourceGiven = true
                sourcePipe = try await open(input: d.source, on: loop)
            }
            if let sink = d.sink {
                sinkGiven = true
                sinkPipe = try await open(output: sink, on: loop)
            }
        } catch {
            // A descriptor given to NIO is NIO's to close, even when it failed (it may have
            // closed it already, and its number may be another's by now); the rest is ours.
            if let sourcePipe { try? await sourcePipe.channel.close() } else if !sourceGiven { close(d.source) }
            if let sink = d.sink, !sinkGiven { close(sink) }
            let f = StreamFailure("stream_unavailable", "the origin's app handed over descriptors handoffd cannot use: \(error)")
            _ = state.fail(f)
            await StreamRelay.sendLast(f.peerFrame, on: peerChannel)
            await StreamRelay.sendLast(f.frame, on: app.channel)
            peerChannel.close(promise: nil)
            await StreamRelay.closeAfterError(app.channel)
            return f
        }
        // A sink whose reader stopped reading would hold its write, and the stream, for
        // ever: whatever ends the peer's connection (a failure on either side, the peer
        // going) closes the sink too, and the write waiting on it fails.
        if let sinkPipe {
            peerChannel.closeFuture.whenComplete { _ in sinkPipe.close(promise: nil) }
        }
        let verdict = AsyncStream<Bool>.makeStream()
        let source = sourcePipe
        let sink = sinkPipe
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await sourceToPeer(source.map { .pipe($0) } ?? .file(d.source), verdict: verdict.stream, peerOut: peerOut,
                                   peerChannel: peerChannel, peerName: peerName, state: state)
            }
            group.addTask {
                await appVerdict(app, verdict: verdict.continuation, peerChannel: peerChannel, state: state)
            }
            if let sink {
                await peerToSink(&peerMessages, sink: sink, socket: d.sinkIsSocket ? d.sink : nil, app: app, peerChannel: peerChannel,
                                 peerName: peerName, state: state)
            } else if await StreamRelay.peerToApp(&peerMessages, app: app, peerChannel: peerChannel, peerName: peerName, state: state) == .appGone {
                if state.fail(StreamFailure("app_closed", "the app at the other end stopped reading before the stream ended")) {
                    await StreamRelay.sendLast(state.failure!.peerFrame, on: peerChannel)
                }
            }
            if state.failure != nil {
                group.cancelAll()
                verdict.continuation.finish()
                peerChannel.close(promise: nil)
                source?.channel.close(promise: nil)
                sink?.close(promise: nil)
                await StreamRelay.closeAfterError(app.channel)
            }
            await group.waitForAll()
        }
        // Whatever way it ended, nothing of the app's stays open here.
        try? await source?.channel.close()
        try? await sink?.close()
        return state.failure
    }

    private enum Source {
        case pipe(Pipe)
        case file(CInt)
    }

    private static func open(input fd: CInt, on loop: EventLoop) async throws -> Pipe {
        try await NIOPipeBootstrap(group: loop)
            .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 4096, initial: 65536, maximum: readBytes))
            .channelOption(.maxMessagesPerRead, value: 2)
            .takingOwnershipOfDescriptor(input: fd) { channel in
                channel.eventLoop.makeCompletedFuture { try Pipe(wrappingChannelSynchronously: channel, configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 4))) }
            }
    }

    /// The sink as a plain channel: each write is awaited until it is in the pipe, so
    /// closing after the last one loses nothing (NIO fails writes still queued when a
    /// channel's output closes).
    private static func open(output fd: CInt, on loop: EventLoop) async throws -> Channel {
        try await NIOPipeBootstrap(group: loop)
            .channelOption(.writeBufferWaterMark, value: StreamChannelTuning.writeWaterMark)
            .takingOwnershipOfDescriptor(output: fd).get()
    }

    /// A pipe's 64 KiB default makes a read per 64 KiB; 1 MiB (the unprivileged limit,
    /// /proc/sys/fs/pipe-max-size) lets one wake-up bring a whole chunk. Best effort.
    private static func raisePipeBuffer(_ fd: CInt) {
        let F_SETPIPE_SZ: CInt = 1031  // Linux; Glibc's module leaves it out (_GNU_SOURCE)
        _ = fcntl(fd, F_SETPIPE_SZ, CInt(readBytes))
    }

    private static func sourceToPeer(_ source: Source, verdict: AsyncStream<Bool>, peerOut: NIOAsyncChannelOutboundWriter<PeerMessage>,
                                     peerChannel: Channel, peerName: String, state: StreamRelay.State) async {
        // A pipe is read on the event loop that also sends, so it cannot run ahead of the
        // socket; a file is read on the thread pool and goes through `PeerDataWriter`.
        func send(_ chunk: ByteBuffer) async throws {
            try await peerOut.write(contentsOf: StreamFrame.dataFrames(of: chunk).map(PeerMessage.stream))
            state.add(toPeer: chunk.readableBytes)
        }
        do {
            switch source {
            case .pipe(let pipe):
                try await pipe.executeThenClose { inbound, _ in
                    var chunks = inbound.makeAsyncIterator()
                    while true {
                        let chunk: ByteBuffer?
                        do { chunk = try await chunks.next() } catch let e as ChannelError where e == .eof {
                            chunk = nil
                        } catch {
                            throw StreamFailure("stream_unavailable", "reading the origin app's source failed: \(error)")
                        }
                        guard let chunk else { break }
                        try await send(chunk)
                    }
                }
            case .file(let fd):
                defer { close(fd) }
                var writer = PeerDataWriter(channel: peerChannel)
                try await StreamFileServer.readAll(fd, allocator: peerChannel.allocator, naming: "the app's source file") { chunk in
                    try await writer.send(chunk)
                    state.add(toPeer: chunk.readableBytes)
                }
                try await writer.drain()
            }
            // The source is done; the app says whether that is a finish.
            var verdicts = verdict.makeAsyncIterator()
            guard await verdicts.next() == true else { return }
            state.appEnded()  // before the write: the peer may close as soon as it has it
            try await peerChannel.writeAndFlush(PeerMessage.stream(.end)).get()
        } catch let f as StreamFailure {
            if state.fail(f) { await StreamRelay.sendLast(f.peerFrame, on: peerChannel) }
            peerChannel.close(promise: nil)
        } catch is CancellationError {
        } catch {
            // A write to the peer failed: its direction reads why (as in StreamRelay).
        }
    }

    /// The app's connection now carries only its verdict: `end` (the source's end is a
    /// finish) or `error`; anything else breaks the protocol.
    private static func appVerdict(_ app: AppStreamEnd, verdict: AsyncStream<Bool>.Continuation, peerChannel: Channel,
                                   state: StreamRelay.State) async {
        defer { verdict.finish() }
        func fail(_ f: StreamFailure, app appFrame: StreamFrame? = nil) async {
            guard state.fail(f) else { return }
            if let appFrame { await StreamRelay.sendLast(appFrame, on: app.channel) }
            await StreamRelay.sendLast(f.peerFrame, on: peerChannel)
            peerChannel.close(promise: nil)
        }
        do {
            for try await frame in app.inbound {
                switch frame {
                case .end:
                    verdict.yield(true)
                    return
                case .error(let code, let message):
                    await fail(StreamFailure(code, message))
                    return
                case .data, .open, .written:
                    let why = "on a stream whose descriptors were handed over, the app sends only end or error"
                    await fail(StreamFailure("app_closed", "the app at the other end broke the stream protocol"),
                               app: StreamFailure("protocol", why).frame)
                    return
                }
            }
            await fail(StreamFailure("app_closed", "the app at the other end closed the stream before ending it"))
        } catch is CancellationError {
        } catch {
            await fail(StreamFailure("app_closed", "the app at the other end lost its connection to handoffd"))
        }
    }

    /// The peer's bytes into the sink; its end closes the sink (a command sees its stdin
    /// end), then the app hears how many bytes went in and `end`. A sink nobody reads any
    /// more is not a failure by itself: the rest is dropped, and the app's verdict decides.
    /// `socket`: the sink's descriptor when it is a socket, shut down for writing at the
    /// end (closing our descriptor alone sends no end if the app's socket is also the source).
    private static func peerToSink(_ messages: inout StreamRelay.PeerMessages, sink: Channel, socket: CInt?, app: AppStreamEnd,
                                   peerChannel: Channel, peerName: String, state: StreamRelay.State) async {
        func fail(_ f: StreamFailure) async {
            if state.fail(f) { await StreamRelay.sendLast(f.frame, on: app.channel) }
        }
        var ended = false
        var open = true
        var written: Int64 = 0
        do {
            while let message = try await messages.next() {
                switch message {
                case .stream(.data(let bytes)) where !ended:
                    if open {
                        do { try await sink.writeAndFlush(bytes).get() } catch { open = false }
                        if open { written += Int64(bytes.readableBytes) }
                    }
                    state.add(toApp: bytes.readableBytes)
                case .stream(.end) where !ended:
                    ended = true
                    state.peerEnded()
                    // Every write above is in the pipe or socket: its reader sees the end.
                    if let socket, sink.isActive { _ = shutdown(socket, Int32(SHUT_WR)) }
                    try? await sink.close()
                    try? await app.outbound.write(.written(written))
                    do { try await app.channel.writeAndFlush(StreamFrame.end).get() } catch {
                        if state.failure == nil, !state.hasAppEnded {
                            await fail(StreamFailure("app_closed", "the app at the other end closed its connection before the stream ended"))
                        }
                        return
                    }
                    if state.hasAppEnded { return }
                case .stream(.error(let code, let message)), .error(let code, let message):
                    await fail(StreamFailure(wire: code, message))
                    return
                default:
                    await fail(StreamFailure("protocol", "\(peerName) sent something that is not a stream frame"))
                    return
                }
            }
        } catch {
            if state.failure != nil { return }
            await fail(StreamFailure("peer_gone", "the connection to \(peerName) broke during the stream: \(error)"))
            return
        }
        if state.failure != nil || (ended && state.hasAppEnded) { return }
        await fail(StreamFailure("peer_gone", "\(peerName) closed the stream before it was finished"))
    }
}
