import HandoffCore
import HandoffControlAPI
import HandoffSystem
import NIOCore
import NIOHTTP1
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

typealias ClientChannel = NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>

/// One HTTP/1.1 connection to handoffd's Unix socket.
enum ControlConnection {
    static func connect(_ socketPath: String) async throws -> ClientChannel {
        try await connect(socketPath) { channel in
            try channel.pipeline.syncOperations.addHTTPClientHandlers()
            return try ClientChannel(wrappingChannelSynchronously: channel)
        }
    }

    /// Connects and sets the pipeline up with `initialize` (on the channel's event loop).
    /// The socket is made here, close-on-exec, and handed to NIO, whose own sockets are
    /// inheritable: a child the app starts (posix_spawn or fork without closing descriptors)
    /// would otherwise hold the connection, and handoffd would not see a session end while
    /// that child lives.
    static func connect<Output: Sendable>(_ socketPath: String, _ initialize: @escaping @Sendable (Channel) throws -> Output) async throws -> Output {
        let fd = try connectedSocket(socketPath, nonBlocking: true)
        do {
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .withConnectedSocket(fd) { channel in
                    channel.eventLoop.makeCompletedFuture { try initialize(channel) }
                }
        } catch let e as HandoffClientError {
            throw e
        } catch {
            throw HandoffClientError.daemonNotRunning(socketPath: socketPath, detail: "cannot connect: \(error)")
        }
    }

    /// A connected close-on-exec socket (blocking for `BlockingExchange`, non-blocking for
    /// NIO), or an error worded for the user.
    static func connectedSocket(_ socketPath: String, nonBlocking: Bool) throws -> CInt {
        try socketExists(socketPath)
        let fd: CInt
        do {
            fd = try UnixSocket.connect(to: socketPath, nonBlocking: nonBlocking)
        } catch .pathTooLong(let capacity) {
            throw HandoffClientError.daemonNotRunning(socketPath: socketPath, detail: "the socket's path is over \(capacity - 1) bytes")
        } catch .failed(let e) {
            throw connectFailure(socketPath, errno: e)
        }
        try checkServer(fd, socketPath)
        return fd
    }

    /// Requests carry the user's activities and trust changes: they go only to a server of
    /// the same user. (Another user who made the socket's folder first, e.g. the `/tmp`
    /// fallback, could otherwise serve a fake handoffd; handoffd refuses such a folder, and
    /// this catches a socket put there anyway.) Closes `fd` when it refuses.
    static func checkServer(_ fd: CInt, _ socketPath: String) throws(HandoffClientError) {
        guard let uid = UnixSocket.peerUID(fd), uid != getuid() else { return }
        close(fd)
        throw .foreignServer(socketPath: socketPath, uid: uid)
    }

    /// A missing socket is the common case (daemon not started): say so plainly.
    static func socketExists(_ socketPath: String) throws {
        var st = stat()
        if lstat(socketPath, &st) != 0 {
            let detail = errno == EACCES ? "the socket cannot be reached (permission denied)" : "no socket"
            throw HandoffClientError.daemonNotRunning(socketPath: socketPath, detail: detail)
        }
    }

    /// Why a connect to the socket failed, as the user reads it.
    static func connectFailure(_ socketPath: String, errno e: CInt) -> HandoffClientError {
        switch e {
        case ECONNREFUSED, ENOENT: return .daemonNotRunning(socketPath: socketPath, detail: "a stale socket nobody listens on")
        case EACCES: return .daemonNotRunning(socketPath: socketPath, detail: "the socket cannot be reached (permission denied)")
        case EAGAIN: return .connectionLost("handoffd's queue of new connections at \(socketPath) is full (it is stuck or flooded); try again, or restart it with `systemctl --user restart handoffd`")
        default: return .daemonNotRunning(socketPath: socketPath, detail: "cannot connect: \(String(cString: strerror(e)))")
        }
    }

    static func requestHead(_ method: HTTPMethod, _ path: String, bodyLength: Int?, headers extra: [(String, String)]) -> HTTPRequestHead {
        var headers = HTTPHeaders([("Host", "localhost"), ("User-Agent", "handoff-client/\(APIVersion.software)")])
        if let bodyLength {
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: "\(bodyLength)")
        }
        for (k, v) in extra { headers.add(name: k, value: v) }
        return HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)
    }

    /// Reads one whole response: (status, JSON body).
    static func readResponse(_ inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>) async throws -> (Int, JSONValue) {
        var status = 0
        var bytes: [UInt8] = []
        for try await part in inbound {
            switch part {
            case .head(let h): status = Int(h.status.code)
            case .body(let b): bytes += b.readableBytesView
            case .end:
                do { return (status, try JSONValue(parsing: bytes)) } catch {
                    throw HandoffClientError.badResponse("\(error)")
                }
            }
        }
        throw HandoffClientError.connectionLost("handoffd closed the connection before answering")
    }

    /// Sends one request and reads the whole response: (status, JSON body). A request that
    /// could not be written whole is sent once more on a new connection (`RequestNotSent`).
    static func exchange(_ socketPath: String, _ method: HTTPMethod, _ path: String, body: JSONValue?,
                         headers: [(String, String)] = []) async throws -> (Int, JSONValue) {
        do {
            return try await exchangeOnce(socketPath, method, path, body: body, headers: headers)
        } catch is RequestNotSent {
            do {
                return try await exchangeOnce(socketPath, method, path, body: body, headers: headers)
            } catch let e as RequestNotSent {
                throw HandoffClientError.connectionLost("handoffd closed the connection before the request could be sent, twice: \(e.detail)")
            }
        }
    }

    private static func exchangeOnce(_ socketPath: String, _ method: HTTPMethod, _ path: String, body: JSONValue?,
                                     headers: [(String, String)]) async throws -> (Int, JSONValue) {
        let channel = try await connect(socketPath)
        let payload = body.map { ByteBuffer(string: $0.serialized()) }
        var head = requestHead(method, path, bodyLength: payload?.readableBytes ?? (method == .GET ? nil : 0), headers: headers)
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        let request = head
        do {
            return try await channel.executeThenClose { inbound, _ in
                try await answer(to: request, payload, on: channel.channel, inbound)
            }
        } catch let e as RequestNotSent {
            throw e
        } catch let e as HandoffClientError {
            throw e
        } catch {
            throw HandoffClientError.connectionLost("\(error)")
        }
    }

    /// Sends the request and reads its answer; `RequestNotSent` when the connection ended
    /// before the request's last byte was in the socket.
    static func answer(to head: HTTPRequestHead, _ payload: ByteBuffer?, on channel: any Channel,
                       _ inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>) async throws -> (Int, JSONValue) {
        // Written on the channel itself, not through the async writer, whose write returns
        // once the bytes are queued: this future says they reached the socket.
        let sent: EventLoopFuture<Void> = send(head, payload, on: channel)
        let failure: any Error
        do {
            return try await readResponse(inbound)
        } catch {
            failure = error
        }
        // Closed first, so that what is still unwritten fails and `sent` ends even if the
        // other side keeps the connection open without reading.
        channel.close(promise: nil)
        do { try await sent.get() } catch { throw RequestNotSent(detail: "\(error)") }
        throw failure
    }

    /// Writes a request with one flush; the future ends when its last byte is in the socket.
    /// One flush: the daemon may answer and close as soon as it has the request.
    static func send(_ head: HTTPRequestHead, _ payload: ByteBuffer?, on channel: any Channel) -> EventLoopFuture<Void> {
        let written: EventLoopPromise<Void> = channel.eventLoop.makePromise()
        channel.eventLoop.execute {
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            if let payload { channel.write(HTTPClientRequestPart.body(.byteBuffer(payload)), promise: nil) }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: written)
        }
        return written.futureResult
    }
}

/// The connection closed before the whole request was written. handoffd acts only on whole
/// requests, so nothing was done and any method may be sent again. It happens when handoffd
/// closes a connection as idle (after `--idle-timeout-ms` with no request) because a client
/// starved of CPU waited that long between its connect and its write.
struct RequestNotSent: Error {
    let detail: String
}
