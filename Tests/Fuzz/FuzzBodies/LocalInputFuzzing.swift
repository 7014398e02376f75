@testable import HandoffDaemon
import HandoffCore
import HandoffControlAPI
import HandoffDesktop
import NIOCore
import NIOEmbedded
import NIOHTTP1
#if canImport(Glibc)
import Glibc
#endif

/// What handoff reads on this workstation besides JSON documents: control requests (method,
/// path and body as the router sees them, and the control socket's bytes through NIO's
/// HTTP/1.1 decoder as the control server configures it), the daemon's and the session
/// agent's config files, the browser extension's native messages (length-prefixed, cut
/// anywhere), and restoration entries. The first byte chooses; bad input must get an
/// error, never a crash.
public enum LocalInputFuzzing {
    /// One input: a broken invariant is reported through `fuzzCheck` (a crash under libFuzzer).
    public static func test(_ bytes: [UInt8]) {
        guard bytes.count > 1 else { return }
        let bytes = Array(bytes.dropFirst())
        let text = String(decoding: bytes, as: UTF8.self)
        switch bytes[0] % 6 {
        case 0:
            // A request line's method and path (the part before the first newline), then the body.
            let line = bytes.prefix { $0 != 0x0A }
            let body = Array(bytes.dropFirst(line.count + 1))
            let parts = String(decoding: line, as: UTF8.self).split(separator: " ", maxSplits: 1)
            let method = HTTPMethod(rawValue: parts.first.map(String.init) ?? "GET")
            let path = parts.count > 1 ? String(parts[1]) : "/"
            var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
            head.headers.add(name: "Content-Length", value: String(body.count))
            readAsTheRouterDoes(ControlRequest(head: head, body: body))
        case 5:
            controlSocketBytes(bytes)
        case 1:
            var config = DaemonConfiguration()
            try? config.apply(configFile: text, path: "handoffd.conf")
        case 2:
            if let config = try? SessionConfiguration(parsing: text, path: "session.conf") {
                // `handoffctl sources` turns a source off by writing one setting back: the
                // file must still parse, to the same settings but that one.
                var expected = config
                expected.media = false
                let written = SessionConfiguration.setting("media", to: "no", in: text)
                fuzzCheck((try? SessionConfiguration(parsing: written, path: "session.conf")) == expected, "writing a setting back changed the file's meaning")
            }
        case 3:
            // Native messages, fed in reads of 1 to 64 bytes as a pipe delivers them.
            var decoder = NativeMessageDecoder(maximumInbound: 1 << 16)
            let chunk = Int(bytes.first ?? 0) % 64 + 1
            var offset = 0
            reading: while offset < bytes.count {
                let end = min(bytes.count, offset + chunk)
                guard let messages = try? decoder.feed(bytes[offset..<end]) else { break reading }
                for m in messages {
                    if let tab = BrowserTab(json: m) { _ = tab.offerable(never: []) }
                }
                offset = end
            }
            _ = try? decoder.finish()
        default:
            if let o = (try? JSONValue(parsing: bytes))?.objectValue {
                _ = try? RestorationRecord.validate(entries: o)
            }
        }
    }

    /// What the router reads of a request: its route, and its body with every decoder of one.
    static func readAsTheRouterDoes(_ request: ControlRequest) {
        _ = ControlEndpoint.match(method: request.method.rawValue, path: request.path)
        if let o = try? request.jsonObject() {
            _ = try? BecomeCurrentRequest(body: o)
            _ = try? TrustRequest(body: o)
            _ = try? ContinueRequest(body: o)
            _ = try? SaveStateRequest(body: o)
            _ = try? RestoreStateRequest(body: o)
            _ = try? SourcesAnswer(body: o)
            _ = try? ConfirmPairingRequest(body: o)
        }
    }

    /// The control socket's bytes, in reads of 1 to 64 bytes, through NIO's HTTP/1.1 decoder
    /// (with pipelining and error handling, as `configureUpgradableHTTPServerPipeline` sets it
    /// up), the stream-upgrade filter and the server's request assembly; each whole request is
    /// read as the router would and answered, so that the next one comes through. A protocol
    /// error ends the connection, as it does on the socket.
    static func controlSocketBytes(_ bytes: [UInt8]) {
        let channel = EmbeddedChannel()
        let ops = channel.pipeline.syncOperations
        do {
            try ops.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
            try ops.addHandler(UpgradeRequestFilter())
            try ops.addHandler(ControlServer.CloseOnError())
        } catch {
            fuzzFailure("the pipeline could not be set up: \(error)")
            return
        }
        var assembler = ControlRequestAssembler(maximumBodyBytes: 1 << 16)
        let chunk = Int(bytes.first ?? 0) % 64 + 1
        var offset = 0
        feeding: while offset < bytes.count, channel.isActive {
            var buffer = channel.allocator.buffer(capacity: chunk)
            buffer.writeBytes(bytes[offset..<min(bytes.count, offset + chunk)])
            offset += chunk
            do { try channel.writeInbound(buffer) } catch { break feeding }
            while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
                switch assembler.add(part) {
                case .incomplete: continue
                case .tooLarge, .broken: break feeding
                case .request(let request, _):
                    readAsTheRouterDoes(request)
                    _ = try? channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
                    _ = try? channel.writeOutbound(HTTPServerResponsePart.end(nil))
                }
            }
            while (try? channel.readOutbound(as: ByteBuffer.self)) != nil {}
        }
        _ = try? channel.finish()
    }

    public static func seeds() -> [[UInt8]] {
        func native(_ json: String) -> [UInt8] { NativeMessageDecoder.encode(json) ?? [] }
        return [
            [0] + Array("POST /v1/activities\n{\"activityType\":\"com.example.edit\",\"title\":\"Draft\",\"userInfo\":{\"line\":{\"int\":\"3\"}}}".utf8),
            [0] + Array("PATCH /v1/activities/0123456789abcdef0123456789abcdef\n{\"title\":\"x\"}".utf8),
            [0] + Array("POST /v1/history/search\n{\"query\":\"plan\",\"limit\":5}".utf8),
            [1] + Array("# handoffd\nname = desk\npeer-port = 4711\nstatic-peer = 192.0.2.7:4711\ndns-sd-domain = corp.example\nhistory-days = 30\n".utf8),
            [2] + Array("media = yes\nbrowser = no\nnever-offer-domains = bank.example, mail.example\n".utf8),
            [3, 7] + native("{\"type\":\"tab\",\"url\":\"https://example.org/a\",\"title\":\"A\",\"incognito\":false}") + native("{\"type\":\"hello\"}"),
            [4] + Array("{\"view.scroll\":{\"double\":0.5},\"doc.tabs\":{\"array\":[{\"string\":\"a\"}]}}".utf8),
            // The socket's bytes: two requests on one connection (the second after the first's
            // answer), a chunked body, and a stream upgrade.
            [5, 9] + Array(("POST /v1/activities HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 34\r\n\r\n" +
                            "{\"activityType\":\"com.example.a\"}GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n").utf8),
            [5, 3] + Array(("PUT /v1/state/org.example.Editor HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                            "5\r\n{\"ver\r\n1c\r\nsion\":\"1\",\"entries\":{\"a\":1}}\r\n0\r\n\r\n").utf8),
            [5, 63] + Array(("POST /v1/streams?activity=0123456789abcdef0123456789abcdef HTTP/1.1\r\nHost: x\r\n" +
                             "Connection: Upgrade\r\nUpgrade: handoff-stream\r\n\r\n").utf8),
        ]
    }
}
