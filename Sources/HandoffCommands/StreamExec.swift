import HandoffClient
import HandoffCore
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
            kill(child.pid, SIGTERM)
            _ = await BlockingFile.waitForExit(child)
            note("could not connect to --stream-exec's pipes: \(error)")
            try? await client.refuseStream(streamID, reason: "the origin could not start its stream command")
            return
        }
        do {
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
            kill(child.pid, SIGTERM)
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
