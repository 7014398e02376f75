import HandoffCore
import HandoffControlAPI
import HandoffStreamFrames
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

typealias ControlChannel = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

/// The control API: HTTP/1.1 with JSON bodies on a Unix socket (Docs/LocalAPI.md).
/// Each connection is served by its own task; one failing connection never stops the server.
public final class ControlServer: Service, Sendable {
    let listener: ControlListener
    let router: ControlRouter
    let registry: ActivityRegistry
    let settings: ControlServerSettings
    let logger: Logger
    let group: MultiThreadedEventLoopGroup
    let onReady: @Sendable () -> Void
    private let connections = ConnectionSet()

    init(listener: ControlListener, router: ControlRouter, registry: ActivityRegistry, settings: ControlServerSettings,
         group: MultiThreadedEventLoopGroup, logger: Logger, onReady: @escaping @Sendable () -> Void) {
        self.listener = listener
        self.router = router
        self.registry = registry
        self.settings = settings
        self.group = group
        self.logger = logger
        self.onReady = onReady
    }

    public func run() async throws {
        let server = try await bind()
        logger.info("control API listening", metadata: ["socket": "\(listener.path)"])
        onReady()
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { tasks in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        tasks.addTask { await self.serve(connection) }
                    }
                }
                // Listener closed: event streams end with their last chunk; keep-alive
                // connections waiting for a request are closed.
                await registry.shutdown()
                connections.closeIdle()
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
        if case .path(let p) = listener { unlink(p) }  // systemd owns an inherited socket's file
    }

    /// An accepted connection: refused by a `RefusalHandler` (no `kind`), or on its way to
    /// HTTP or a stream once its first request says which.
    struct Accepted: Sendable {
        let channel: Channel
        let kind: EventLoopFuture<ControlConnectionKind>?
    }

    private func bind() async throws -> NIOAsyncChannel<Accepted, Never> {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
        let settings = self.settings
        let connections = self.connections
        let logger = self.logger
        // Who may connect is decided here, at accept time, before any HTTP handler exists:
        // a refusal is one raw response, and nothing else of the API is reachable.
        // The initializer must never fail: NIO would then neither register nor close the
        // socket. Whatever goes wrong becomes a refusal (or, failing that, a closed channel).
        let initializer: @Sendable (Channel) -> EventLoopFuture<Accepted> = { channel in
            PeerCredentials.of(channel).map(Optional.some).recover { _ in nil }.flatMapThrowing { credentials in
                var refusal: APIError?
                guard let credentials else {
                    logger.warning("refused a control connection whose credentials could not be read")
                    try channel.pipeline.syncOperations.addHandler(RefusalHandler(APIError(status: 403, code: "forbidden",
                        message: "handoffd could not tell which user is connecting (SO_PEERCRED failed), so it refuses")))
                    return Accepted(channel: channel, kind: nil)
                }
                if credentials.uid != getuid() {
                    logger.warning("refused a control connection from another user", metadata: ["uid": "\(credentials.uid)", "pid": "\(credentials.pid)"])
                    refusal = APIError(status: 403, code: "forbidden",
                        message: "handoffd of uid \(getuid()) serves only its own user; uid \(credentials.uid) (pid \(credentials.pid)) is refused")
                } else if !connections.insert(channel, limit: settings.maximumConnections) {
                    logger.warning("too many control connections; refusing one", metadata: ["limit": "\(settings.maximumConnections)"])
                    refusal = APIError(status: 503, code: "too_many_connections",
                        message: "handoffd has \(settings.maximumConnections) connections open already; close some and retry")
                }
                let ops = channel.pipeline.syncOperations
                if let refusal {
                    try ops.addHandler(RefusalHandler(refusal))
                    return Accepted(channel: channel, kind: nil)
                }
                // The first request may upgrade the connection to a continuation stream;
                // every other connection is plain HTTP from its first request on.
                let upgrade = NIOTypedHTTPServerUpgradeConfiguration<ControlConnectionKind>(
                    upgraders: [StreamUpgrader(maximumFrameBytes: StreamFrame.maximumFrameBytes)],
                    notUpgradingCompletionHandler: { channel in
                        channel.eventLoop.makeCompletedFuture { .http(try ControlChannel(wrappingChannelSynchronously: channel)) }
                    })
                let kind = try ops.configureUpgradableHTTPServerPipeline(configuration: .init(upgradeConfiguration: upgrade))
                // The deadlines come after the upgrade handler: once it upgrades, the bytes it
                // replays are stream frames, which only the stream pipeline may see.
                let upgrader = try ops.handler(type: NIOTypedHTTPServerUpgradeHandler<ControlConnectionKind>.self)
                try ops.addHandler(UpgradeRequestFilter(), name: UpgradeRequestFilter.name, position: .before(upgrader))
                try ops.addHandler(RequestDeadlineHandler(
                    requestTimeout: .milliseconds(settings.requestTimeout), idleTimeout: .milliseconds(settings.idleTimeout)),
                    name: RequestDeadlineHandler.name, position: .after(upgrader))
                // Until the first request says what the connection is, nothing else would
                // close it on garbage (the 400 is written first, by NIO's error handler).
                try ops.addHandler(CloseOnError())
                return Accepted(channel: channel, kind: kind)
            }.recover { error in
                logger.warning("could not set up a control connection; closing it", metadata: ["error": "\(error)"])
                connections.remove(channel)
                channel.close(promise: nil)
                return Accepted(channel: channel, kind: nil)
            }
        }
        switch listener {
        case .inherited(let fd, _):
            return try await bootstrap.bind(fd, childChannelInitializer: initializer)
        case .path(let path):
            // ControlListener.prepare ran at start-up, before any state was touched.
            // NIO never chmods the socket, and a chmod after bind would leave a moment in
            // which it is reachable with wider permissions: create it 0600 through the umask.
            let old = umask(0o177)
            defer { umask(old) }
            return try await bootstrap.bind(unixDomainSocketPath: path, childChannelInitializer: initializer)
        }
    }

    final class CloseOnError: ChannelInboundHandler, Sendable {
        typealias InboundIn = NIOAny
        func errorCaught(context: ChannelHandlerContext, error: Error) {
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }

    private func serve(_ accepted: Accepted) async {
        let channel = accepted.channel
        guard let kind = accepted.kind else {
            // The RefusalHandler answers and closes; nothing to do but wait for it.
            try? await channel.closeFuture.get()
            return
        }
        defer { connections.remove(channel) }
        do {
            switch try await kind.get() {
            case .http(let connection):
                try await connection.executeThenClose { inbound, outbound in
                    try await self.serveRequests(inbound: inbound, outbound: outbound, channel: channel)
                }
            case .stream(let connection, let request):
                try await connection.executeThenClose { inbound, outbound in
                    try await self.serveStream(request, inbound: inbound, outbound: outbound, channel: channel)
                }
            }
        } catch {
            channel.close(promise: nil)  // e.g. closed before its first request was whole
            logger.debug("control connection ended with an error", metadata: ["error": "\(error)"])
        }
    }

    /// A connection upgraded to a continuation stream: the continuing app's (relayed to the
    /// origin through PeerService) or the origin owner's (handed to the peer waiting for it).
    private func serveStream(_ request: StreamRequest, inbound: NIOAsyncChannelInboundStream<StreamFrame>,
                             outbound: NIOAsyncChannelOutboundWriter<StreamFrame>, channel: Channel) async throws {
        let finished = channel.eventLoop.makePromise(of: Void.self)
        /// The continuing side's end, writing into its file when it named one (`into`);
        /// nil when that file cannot be written (the app was told why).
        func continuing(into path: String?) async -> AppStreamEnd? {
            var end = AppStreamEnd(inbound: inbound, outbound: outbound, channel: channel, length: nil, finished: finished)
            guard let path else { return end }
            do { end.sink = try StreamFileSink.open(path) } catch {
                await StreamRelay.refuse(error, on: channel)
                return nil
            }
            return end
        }
        switch request {
        case .open(let activityID, let document, let into):
            if let end = await continuing(into: into) {
                let origin = await router.peers.streamOrigin(of: activityID)
                await router.peerStreams.continueStream(activityID, document: document, app: end, link: origin.link, continuedFrom: origin.continuedFrom)
                await end.sink?.close()
            }
            finished.succeed()
        case .accept(let streamID, let length):
            let end = AppStreamEnd(inbound: inbound, outbound: outbound, channel: channel, length: length, finished: finished)
            if let failure = await router.streams.accept(streamID, end) {
                await StreamRelay.refuse(failure, on: channel)
                finished.succeed()
            }
        case .paste(let id, let type, let into):
            if let end = await continuing(into: into) {
                await router.peerStreams.pasteClipboard(id: id, type: type, app: end)
                await end.sink?.close()
            }
            finished.succeed()
        case .copy(let type):
            await ClipboardCopy.run(type: type, inbound: inbound, outbound: outbound, channel: channel, clipboard: router.clipboard)
            finished.succeed()
        }
        try await finished.futureResult.get()
    }

    private func serveRequests(inbound: NIOAsyncChannelInboundStream<HTTPServerRequestPart>,
                               outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, channel: Channel) async throws {
        var assembler = ControlRequestAssembler(maximumBodyBytes: settings.maximumBodyBytes)
        for try await part in inbound {
            let request: ControlRequest, keepAlive: Bool
            switch assembler.add(part) {
            case .incomplete: continue
            case .broken: return
            case .tooLarge:
                try await Self.write(.error(.tooLarge(settings.maximumBodyBytes)), to: outbound, keepAlive: false)
                return
            case .request(let r, let k): (request, keepAlive) = (r, k)
            }
            switch ControlEndpoint.match(method: request.method.rawValue, path: request.path) {
            case .notFound:
                try await Self.write(.error(HandoffError.notFound("no route \(request.path); see Docs/LocalAPI.md (routes start with /v1/)")), to: outbound, keepAlive: keepAlive)
            case .methodNotAllowed:
                try await Self.write(.error(.methodNotAllowed("\(request.method)", request.path)), to: outbound, keepAlive: keepAlive)
            case .endpoint(.events, _):
                try await streamEvents(outbound: outbound, channel: channel)
                return
            case .endpoint(let endpoint, let parameter):
                let tickets = StateWriter.Tickets()
                var response = await StateWriter.$requestTickets.withValue(tickets) { await router.handle(endpoint, parameter, request) }
                // A change is answered once the state files it changed are in place and
                // flushed (StateWriter writes them off the loop). A request that changed
                // none answers at once.
                if let failure = await StateWriter.shared.settle(tickets.all), response.status < 300 {
                    response = .error(HandoffError(.storageFull, code: "not_saved",
                        message: "handoffd made the change but could not write it to its state directory (\(failure)), so a restart would lose it; check the disk (see `handoffctl doctor`) and try again"))
                }
                try await Self.write(response, to: outbound, keepAlive: keepAlive)
            }
            if !keepAlive { return }
        }
    }

    /// JSON lines, one event each, flushed as they happen. The stream is a session: what
    /// it owns is invalidated when the connection closes.
    private func streamEvents(outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, channel: Channel) async throws {
        connections.markStreaming(channel)
        let (token, events) = await registry.openSession()
        let registry = self.registry
        channel.closeFuture.whenComplete { _ in
            Task { await registry.closeSession(token) }
        }
        let headers = HTTPHeaders([("Content-Type", "application/x-ndjson"), ("Cache-Control", "no-store")])
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)))
        for await event in events {
            let line = channel.allocator.buffer(bytes: event.json.serializedBytes() + [UInt8(ascii: "\n")])
            try await outbound.write(.body(.byteBuffer(line)))
        }
        try await outbound.write(.end(nil))
    }

    static func write(_ response: ControlResponse, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, keepAlive: Bool) async throws {
        let body = ByteBuffer(bytes: response.body.serializedBytes() + [UInt8(ascii: "\n")])
        var headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", "\(body.readableBytes)")])
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        if let warning = response.warning { headers.add(name: ControlEndpoint.warningHeader, value: warning) }
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)))
        try await outbound.write(.body(.byteBuffer(body)))
        try await outbound.write(.end(nil))
    }
}
