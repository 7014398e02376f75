import HandoffControlAPI
import HandoffCore
import HandoffSystem
import NIOCore
import NIOEmbedded
import NIOHTTP1
#if canImport(Glibc)
import Glibc
#endif

/// One exchange on a blocking socket, on the calling thread, for a process that makes a
/// call or two and exits (handoffctl): the NIO path starts event-loop threads for it, and
/// they cost more than the exchange. The bytes still go through NIO's HTTP/1.1 encoder and
/// decoder, in an `EmbeddedChannel` (no threads, no event loop).
enum BlockingExchange {
    static func exchange(_ socketPath: String, _ method: HTTPMethod, _ path: String, body: JSONValue?,
                         headers: [(String, String)] = []) throws -> (Int, JSONValue) {
        do {
            return try exchangeOnce(socketPath, method, path, body: body, headers: headers)
        } catch is RequestNotSent {
            do {
                return try exchangeOnce(socketPath, method, path, body: body, headers: headers)
            } catch let e as RequestNotSent {
                throw HandoffClientError.connectionLost("could not send the request, twice: \(e.detail)")
            }
        }
    }

    private static func exchangeOnce(_ socketPath: String, _ method: HTTPMethod, _ path: String, body: JSONValue?,
                                     headers: [(String, String)]) throws -> (Int, JSONValue) {
        let fd = try connect(socketPath)
        defer { close(fd) }
        let codec = EmbeddedChannel()
        // Finished, or its pipeline keeps itself alive (LeakSanitizer: a leak per call).
        defer { _ = try? codec.finish(acceptAlreadyClosed: true) }
        try codec.pipeline.syncOperations.addHTTPClientHandlers()
        let payload = body.map { ByteBuffer(bytes: $0.serializedBytes()) }
        var head = ControlConnection.requestHead(method, path, bodyLength: payload?.readableBytes ?? (method == .GET ? nil : 0), headers: headers)
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        try codec.writeOutbound(HTTPClientRequestPart.head(head))
        if let payload { try codec.writeOutbound(HTTPClientRequestPart.body(.byteBuffer(payload))) }
        try codec.writeOutbound(HTTPClientRequestPart.end(nil))
        var request: [UInt8] = []
        while let b = try codec.readOutbound(as: ByteBuffer.self) { request += b.readableBytesView }
        do { try request.withUnsafeBytes { try writeAll(fd, $0) } } catch {
            throw RequestNotSent(detail: "\(error)")
        }
        var status = 0
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw HandoffClientError.connectionLost(String(cString: strerror(errno)))
            }
            if n == 0 { throw HandoffClientError.connectionLost("handoffd closed the connection before answering") }
            try codec.writeInbound(ByteBuffer(bytes: buffer[0..<n]))
            while let part = try codec.readInbound(as: HTTPClientResponsePart.self) {
                switch part {
                case .head(let h): status = Int(h.status.code)
                case .body(let b): answer += b.readableBytesView
                case .end:
                    do { return (status, try JSONValue(parsing: answer)) } catch {
                        throw HandoffClientError.badResponse("\(error)")
                    }
                }
            }
        }
    }

    private static func connect(_ socketPath: String) throws -> CInt {
        try ControlConnection.connectedSocket(socketPath, nonBlocking: false)
    }
}
