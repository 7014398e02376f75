import HandoffCore
import HandoffControlAPI
import HandoffStreamFrames
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A continuation stream as an app sees it: bytes both ways with the other workstation's
/// app, each direction ended on its own (`Writer.finish`, `Reader.read` returning nil),
/// and failures as thrown `HandoffClientError.stream` errors, never a silent end.
public struct ContinuationStream: Sendable {
    /// What the daemon said when the stream opened.
    public let info: StreamInfo
    public let reader: Reader
    public let writer: Writer

    /// Reads what the other side sends. Use it from one task at a time.
    public final class Reader: @unchecked Sendable {
        // @unchecked: an iterator belongs to one reader at a time, which is the documented rule.
        private var iterator: NIOAsyncChannelInboundStream<StreamFrame>.AsyncIterator
        private var ended = false

        init(_ iterator: NIOAsyncChannelInboundStream<StreamFrame>.AsyncIterator) { self.iterator = iterator }

        /// The next bytes; nil once the other side ended its direction. (On a stream whose
        /// bytes handoffd writes into a file, `next()` tells how far it got.)
        public func read() async throws -> ByteBuffer? {
            while let delivery = try await next() {
                if case .bytes(let bytes) = delivery { return bytes }
            }
            return nil
        }

        /// What arrived: bytes, or, on a stream opened `into` a file, how many bytes
        /// handoffd has written into it so far. Nil once the other side ended its direction.
        public func next() async throws -> Delivery? {
            if ended { return nil }
            let frame: StreamFrame?
            do { frame = try await iterator.next() } catch {
                throw HandoffClientError.stream(code: "connection_lost", message: "the connection to handoffd broke: \(error)")
            }
            switch frame {
            case .data(let bytes)?: return .bytes(bytes)
            case .written(let total)?: return .written(total)
            case .end?:
                ended = true
                return nil
            case .error(let code, let message)?: throw HandoffClientError.stream(code: code, message: message)
            case .open?: throw HandoffClientError.badResponse("a second open frame")
            case nil: throw HandoffClientError.stream(code: "connection_lost", message: "handoffd closed the stream before it ended")
            }
        }

        /// After the other side's end (`read` or `next` returned nil): waits until handoffd
        /// closes the stream, throwing if it fails first. For an app that handed its
        /// descriptors over (`acceptStream(_:handingOver:...)`): nothing it writes would fail,
        /// so this is how it hears that the stream broke while its source still runs.
        public func waitUntilClosed() async throws {
            while true {
                let frame: StreamFrame?
                do { frame = try await iterator.next() } catch {
                    throw HandoffClientError.stream(code: "connection_lost", message: "the connection to handoffd broke: \(error)")
                }
                switch frame {
                case nil: return
                case .error(let code, let message)?: throw HandoffClientError.stream(code: code, message: message)
                default: continue
                }
            }
        }
    }

    public enum Delivery: Sendable {
        case bytes(ByteBuffer)
        /// Bytes written into the stream's file so far (`withStream(toActivity:into:)`).
        case written(Int64)
    }

    /// Sends to the other side. Writes wait while the other side is not keeping up.
    public struct Writer: Sendable {
        let outbound: NIOAsyncChannelOutboundWriter<StreamFrame>
        let channel: Channel
        let failure: StreamFailureWatcher.Seen

        public func write(_ bytes: ByteBuffer) async throws {
            // Any size in, frames of at most 256 KiB out (the daemon refuses frames over 1 MiB).
            for frame in StreamFrame.dataFrames(of: bytes) {
                do { try await outbound.write(frame) } catch {
                    throw failure.error ?? HandoffClientError.stream(code: "connection_lost", message: "the stream closed while writing: \(error)")
                }
            }
        }

        public func write(_ bytes: [UInt8]) async throws { try await write(ByteBuffer(bytes: bytes)) }

        /// Ends this direction; the other side's reader sees the end after all bytes.
        public func finish() async throws {
            do { try await channel.writeAndFlush(StreamFrame.end).get() } catch {
                throw failure.error ?? HandoffClientError.stream(code: "connection_lost", message: "the stream closed before it was ended: \(error)")
            }
        }

        /// Aborts the stream in both directions; the other side gets this error.
        public func fail(code: String, message: String) async {
            try? await channel.writeAndFlush(StreamFrame.error(code: code, message: message)).get()
        }
    }
}

/// The open frame's facts.
public struct StreamInfo: Sendable, Equatable {
    public var activityID: String
    /// The other workstation.
    public var device: PeerDevice
    /// Bytes the origin announced it will send, when it knows.
    public var length: Int64?
    /// The open frame whole: a paste's also has `clipboardID` and `type`.
    public var fields: JSONObject

    init(_ o: JSONObject) {
        fields = o
        activityID = o["activityID"]?.stringValue ?? ""
        device = PeerDevice(json: o["device"])
        if case .integer(let n)? = o["length"] { length = n }
    }
}

extension HandoffClient {
    /// Continuing side: opens a stream to an activity continued from another workstation
    /// and runs `body` with it; the stream closes when `body` returns.
    /// With `document`, the stream carries the activity's document from the origin instead.
    ///
    /// With `into` (an absolute path: an empty regular file you made, or /dev/null),
    /// handoffd writes what the origin sends into that file itself, one hop fewer than
    /// through this process: the reader then gets `.written` counts instead of bytes, and
    /// its end once everything is written (not synced: sync the file if you keep it).
    /// A handoffd too old for `into` sends bytes as usual, so handle `.bytes` too.
    public func withStream<R: Sendable>(toActivity id: String, document: Bool = false, into: String? = nil,
                                        _ body: (ContinuationStream) async throws -> R) async throws -> R {
        try await StreamConnection.run(socketPath: socketPath, path: ControlEndpoint.openStreamPath(activity: id, document: document, into: into), headers: [], body)
    }

    /// Origin side: takes the stream a `stream-requested` event asked this app for.
    /// `length`: what this side will send, when known (the other side shows progress).
    public func acceptStream<R: Sendable>(_ streamID: String, length: Int64? = nil, _ body: (ContinuationStream) async throws -> R) async throws -> R {
        let headers = length.map { [(ControlEndpoint.streamLengthHeader, String($0))] } ?? []
        return try await StreamConnection.run(socketPath: socketPath, path: ControlEndpoint.acceptStream.path(streamID), headers: headers, body)
    }

    /// Origin side: declines a requested stream; the continuing side gets `stream_refused`.
    public func refuseStream(_ streamID: String, reason: String? = nil) async throws {
        let (status, json) = try await ControlConnection.exchange(socketPath, .POST, ControlEndpoint.refuseStream.path(streamID),
                                                                  body: RefuseStreamRequest(reason: reason).json)
        guard (200..<300).contains(status) else {
            throw HandoffClientError.api(APIError(status: status, body: json) ?? APIError(status: status, code: "http_\(status)", message: "handoffd answered HTTP \(status)"))
        }
    }
}

/// One control connection upgraded to a stream (`Upgrade: handoff-stream`).
enum StreamConnection {
    typealias StreamChannel = NIOAsyncChannel<StreamFrame, StreamFrame>

    enum Opened: Sendable {
        case stream(StreamChannel)
        /// The daemon answered with an HTTP error instead of upgrading.
        case refused(ClientChannel)
    }

    struct Upgrader: NIOTypedHTTPClientProtocolUpgrader {
        typealias UpgradeResult = Opened
        let supportedProtocol = ControlEndpoint.streamProtocol
        let requiredUpgradeHeaders: [String] = []
        /// Shared with the stream's writer (`StreamFailureWatcher`).
        let failure: StreamFailureWatcher.Seen

        func addCustom(upgradeRequestHeaders: inout HTTPHeaders) {}
        func shouldAllowUpgrade(upgradeResponse: HTTPResponseHead) -> Bool { true }

        func upgrade(channel: Channel, upgradeResponse: HTTPResponseHead) -> EventLoopFuture<Opened> {
            channel.eventLoop.makeCompletedFuture {
                let ops = channel.pipeline.syncOperations
                try ops.addHandler(ByteToMessageHandler(StreamFrameDecoder(), maximumBufferSize: StreamFrame.maximumFrameBytes + 4))
                try ops.addHandler(StreamFailureWatcher(failure))
                try ops.addHandler(StreamFrameEncoder())
                channel.setOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 256 * 1024, high: 1024 * 1024)).whenFailure { _ in }
                // Bulk data: read in large pieces rather than NIO's 64 KiB at most.
                channel.setOption(ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 4096, initial: 65536, maximum: 1 << 20)).whenFailure { _ in }
                return .stream(try StreamChannel(wrappingChannelSynchronously: channel,
                                                 configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 4))))
            }
        }
    }

    static func run<R: Sendable>(socketPath: String, path: String, headers extra: [(String, String)],
                                 _ body: (ContinuationStream) async throws -> R) async throws -> R {
        var head = ControlConnection.requestHead(.POST, path, bodyLength: 0, headers: extra)
        head.headers.remove(name: "Content-Type")
        let request = head
        let failure = StreamFailureWatcher.Seen()
        let opened: Opened
        do {
            let future = try await ControlConnection.connect(socketPath) { channel in
                let config = NIOTypedHTTPClientUpgradeConfiguration<Opened>(
                    upgradeRequestHead: request, upgraders: [Upgrader(failure: failure)],
                    notUpgradingCompletionHandler: { channel in
                        channel.eventLoop.makeCompletedFuture { .refused(try ClientChannel(wrappingChannelSynchronously: channel)) }
                    })
                var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: config)
                // The first frames may arrive in the same read as the 101: keep them.
                pipeline.leftOverBytesStrategy = .forwardBytes
                return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
            }
            opened = try await future.get()
        } catch let e as HandoffClientError {
            throw e
        } catch {
            throw HandoffClientError.connectionLost("\(error)")
        }
        switch opened {
        case .refused(let channel):
            throw try await readError(channel)
        case .stream(let channel):
            return try await channel.executeThenClose { inbound, outbound in
                var iterator = inbound.makeAsyncIterator()
                let first: StreamFrame?
                do { first = try await iterator.next() } catch { throw HandoffClientError.connectionLost("\(error)") }
                switch first {
                case .open(let o)?:
                    let stream = ContinuationStream(info: StreamInfo(o), reader: .init(iterator),
                                                    writer: .init(outbound: outbound, channel: channel.channel, failure: failure))
                    return try await body(stream)
                case .error(let code, let message)?:
                    throw HandoffClientError.stream(code: code, message: message)
                default:
                    throw HandoffClientError.connectionLost("handoffd closed the stream before it opened")
                }
            }
        }
    }

    private static func readError(_ channel: ClientChannel) async throws -> HandoffClientError {
        let (status, json) = try await channel.executeThenClose { inbound, _ in try await ControlConnection.readResponse(inbound) }
        return .api(APIError(status: status, body: json) ?? APIError(status: status, code: "http_\(status)", message: "handoffd answered HTTP \(status)"))
    }
}
