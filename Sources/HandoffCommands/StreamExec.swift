import HandoffClient
import HandoffCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// `become-current --attach --stream-exec CMD`: each requested stream runs CMD with its
/// stdin fed from the stream (closed at the other side's end) and its stdout sent back
/// (ended when CMD exits 0; a non-zero exit fails the stream).
struct StreamExec {
    let client: HandoffClient
    let command: String
    let json: Bool

    func serve(streamID: String, activityID: ActivityID, device: PeerDevice) async {
        let child: ShellCommand.Child
        do {
            child = try ShellCommand.spawn(command, environment: [
                "HANDOFF_ACTIVITY_ID": activityID.rawValue, "HANDOFF_STREAM_DEVICE": device.name, "HANDOFF_STREAM_ID": streamID,
            ])
        } catch {
            note("could not start --stream-exec for a stream from \(device.name): \(error)")
            try? await client.refuseStream(streamID, reason: "the origin could not start its stream command")
            return
        }
        // handoffd reads CMD's stdout and writes its stdin itself (LocalAPI.md §15.8): the
        // stream's bytes then skip a copy through this process. An older handoffd cannot
        // take them; then they are relayed here.
        do {
            let received = try await handOver(child, streamID: streamID)
            note("stream to \(device.name) done: handoffd moved the bytes, \(received) received")
        } catch let HandoffClientError.api(e) where e.code == "descriptors_unsupported" || e.code == "busy" {
            // An older handoffd, or one taking too many handovers at once: relay instead.
            await relay(child, streamID: streamID, device: device)
        } catch let HandoffClientError.api(e) {
            // Refused before the stream started: the other side hears now, not at the deadline.
            try? await client.refuseStream(streamID, reason: "the origin could not hand its command to handoffd: \(e.message)")
            child.terminate()
            _ = await BlockingFile.waitForExit(child)
            note("stream to \(device.name) failed: \(e.message)")
        } catch {
            child.terminate()
            _ = await BlockingFile.waitForExit(child)
            note("stream to \(device.name) failed: \(error)")
        }
    }

    /// CMD's pipes go to handoffd; this process keeps only CMD's exit status, which is the
    /// stream's verdict. Returns the bytes handoffd wrote into CMD's stdin.
    /// Throws `descriptors_unsupported` with the pipes still open here; on any other
    /// outcome they are closed.
    private func handOver(_ child: ShellCommand.Child, streamID: String) async throws -> Int64 {
        var open = true
        func closePipes() {
            guard open else { return }
            close(child.stdin)
            close(child.stdout)
            open = false
        }
        do {
            return try await accept(child, streamID: streamID, closePipes)
        } catch let HandoffClientError.api(e) where e.code == "descriptors_unsupported" || e.code == "busy" {
            throw HandoffClientError.api(e)
        } catch {
            closePipes()
            throw error
        }
    }

    private func accept(_ child: ShellCommand.Child, streamID: String, _ closePipes: () -> Void) async throws -> Int64 {
        try await client.acceptStream(streamID, handingOver: child.stdout, sink: child.stdin) { stream in
            // handoffd holds its own copies now: CMD's stdin ends when handoffd closes it.
            closePipes()
            // The other side's end and any failure arrive while CMD runs: a failure stops
            // CMD (it may never end by itself), and is what this stream reports.
            let failure = NIOLockedValueBox<(any Error)?>(nil)
            return try await withThrowingTaskGroup(of: Int64.self) { group in
                group.addTask {
                    do {
                        var received: Int64 = 0
                        while let delivery = try await stream.reader.next() {
                            if case .written(let n) = delivery { received = n }
                        }
                        // Then until handoffd closes: a failure now must still stop CMD.
                        try await stream.reader.waitUntilClosed()
                        return received
                    } catch {
                        failure.withLockedValue { $0 = error }
                        child.terminate()
                        throw error
                    }
                }
                let status = await BlockingFile.waitForExit(child)
                if let failed = failure.withLockedValue({ $0 }) { throw failed }
                if status != 0 {
                    await stream.writer.fail(code: "stream_exec_failed", message: "the origin's stream command exited with status \(status)")
                    // CMD may have died because handoffd failed the stream first (a closed
                    // pipe): then handoffd's reason, on its way to the reader, is the one to tell.
                    do { _ = try await group.next() } catch let e as HandoffClientError {
                        if case .stream(let code, _) = e, code != "connection_lost" { throw e }
                    }
                    throw CommandFailure(description: "--stream-exec exited with status \(status)")
                }
                try await stream.writer.finish()
                return try await group.next() ?? 0
            }
        }
    }

    /// The bytes through this process: for a handoffd without a descriptor socket.
    private func relay(_ child: ShellCommand.Child, streamID: String, device: PeerDevice) async {
        // CMD's stdout and stdin as one NIO pipe channel: read as data arrives (epoll), no
        // thread hop per chunk; closing its output half closes CMD's stdin.
        let pipe: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            pipe = try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.allowRemoteHalfClosure, value: true)
                .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 4096, initial: 65536, maximum: 256 * 1024))
                .takingOwnershipOfDescriptors(input: child.stdout, output: child.stdin) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel,
                                                                     configuration: .init(isOutboundHalfClosureEnabled: true))
                    }
                }
        } catch {
            close(child.stdin)
            close(child.stdout)
            child.terminate()
            _ = await BlockingFile.waitForExit(child)
            note("could not connect to --stream-exec's pipes: \(error)")
            try? await client.refuseStream(streamID, reason: "the origin could not start its stream command")
            return
        }
        do {
            let channel = pipe.channel
            let (sent, received) = try await pipe.executeThenClose { fromCommand, toCommand in
                try await client.acceptStream(streamID) { stream in
                    try await withThrowingTaskGroup(of: Int64.self) { group in
                        // The other side's bytes into CMD's stdin; its end closes stdin.
                        group.addTask {
                            var total: Int64 = 0
                            while let bytes = try await stream.reader.read() {
                                // CMD stopped reading (it exited or closed stdin): not an error
                                // by itself; its exit status decides.
                                do { try await toCommand.write(bytes) } catch { break }
                                total += Int64(bytes.readableBytes)
                            }
                            // NIO fails writes still queued when the output closes: an empty
                            // write after them completes once they are in the pipe.
                            try? await channel.writeAndFlush(ByteBuffer()).get()
                            toCommand.finish()  // CMD's stdin closes: that is how CMD sees the end
                            return total
                        }
                        var total: Int64 = 0
                        for try await bytes in fromCommand {
                            try await stream.writer.write(bytes)
                            total += Int64(bytes.readableBytes)
                        }
                        let status = await BlockingFile.waitForExit(child)
                        if status != 0 {
                            await stream.writer.fail(code: "stream_exec_failed", message: "the origin's stream command exited with status \(status)")
                            throw CommandFailure(description: "--stream-exec exited with status \(status)")
                        }
                        try await stream.writer.finish()
                        let received = try await group.next() ?? 0
                        return (total, received)
                    }
                }
            }
            note("stream to \(device.name) done: \(sent) bytes sent, \(received) received")
        } catch {
            child.terminate()
            _ = await BlockingFile.waitForExit(child)
            note("stream to \(device.name) failed: \(error)")
        }
    }

    private func note(_ text: String) {
        if !json { Output.err("handoffctl: \(text)") }
    }
}

extension BlockingFile {
    /// Reaps the child on the blocking pool.
    static func waitForExit(_ child: ShellCommand.Child) async -> Int32 {
        (try? await pool.runIfActive { child.wait() }) ?? -1
    }
}
