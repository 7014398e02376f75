import HandoffCore
import HandoffControlAPI
import HandoffStreamFrames
import NIOCore
import NIOHTTP1

/// What a control connection became after its first request: plain HTTP, or a
/// continuation stream (an HTTP upgrade to `handoff-stream`).
enum ControlConnectionKind: Sendable {
    case http(ControlChannel)
    case stream(AppStreamChannel, StreamRequest)
}

/// A stream request on the control socket, read from the upgrade request's target.
enum StreamRequest: Sendable, Equatable {
    /// The continuing side: open a stream to this (continued) activity.
    /// `document`: the activity's document file instead of its app's stream.
    /// `into`: handoffd writes what arrives into this file instead of sending it to the
    /// app (absolute; checked when the stream opens, `StreamFileSink`).
    case open(activityID: ActivityID, document: Bool = false, into: String? = nil)
    /// The origin's owner: take the stream it was asked for, announcing its length.
    case accept(streamID: String, length: Int64?)
    /// A paste here: the newest copy's bytes in `type` (nil: its first format), only if
    /// it is still copy `id` when one is named; `into` as for `open`.
    case paste(id: ClipboardID?, type: String?, into: String?)
    /// `handoffctl copy`: the stream's data becomes this workstation's copy, in `type`.
    case copy(type: String)

    /// Nil when the head is no well-formed stream request; it is then answered as plain
    /// HTTP, where the router says what is wrong.
    init?(head: HTTPRequestHead) {
        guard head.method == .POST else { return nil }
        let (path, query) = StreamRequest.split(head.uri)
        let segments = path.split(separator: "/").map(String.init)
        func into() -> String?? {
            guard let encoded = query["into"] else { return .some(nil) }
            guard let path = PercentEncoding.decode(Substring(encoded)), path.hasPrefix("/"), !path.utf8.contains(0) else { return nil }
            return path
        }
        func type() -> String?? {
            guard let encoded = query["type"] else { return .some(nil) }
            guard let type = PercentEncoding.decode(Substring(encoded)), ClipboardFormat.isValidType(type) else { return nil }
            return type
        }
        if segments == ["v1", "streams"] {
            guard let id = query["activity"].flatMap(ActivityID.init) else { return nil }
            let document = query["document"].map { $0 == "1" || $0 == "true" } ?? false
            guard let into = into() else { return nil }
            self = .open(activityID: id, document: document, into: into)
        } else if segments == ["v1", "clipboard", "paste"] {
            var id: ClipboardID?
            if let text = query["id"] {
                guard let valid = ClipboardID(text) else { return nil }
                id = valid
            }
            guard let type = type(), let into = into() else { return nil }
            self = .paste(id: id, type: type, into: into)
        } else if segments == ["v1", "clipboard", "copy"] {
            guard let type = type(), let given = type else { return nil }
            self = .copy(type: given)
        } else if segments.count == 4, segments[0] == "v1", segments[1] == "streams", segments[3] == "accept",
                  StreamRequest.isStreamID(segments[2]) {
            var length: Int64?
            if let text = head.headers.first(name: ControlEndpoint.streamLengthHeader) {
                guard let n = Int64(text), n >= 0 else { return nil }
                length = n
            }
            self = .accept(streamID: segments[2], length: length)
        } else {
            return nil
        }
    }

    static func isStreamID(_ s: String) -> Bool { s.count == 32 && s.allSatisfy { $0.isHexDigit } }

    static func split(_ uri: String) -> (String, [String: String]) {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query[String(kv[0])] = kv.count == 2 ? String(kv[1]) : ""
            }
        }
        return (String(parts[0]), query)
    }
}

/// Switches a control connection to a continuation stream: the 101 answer, then stream
/// frames (Docs/LocalAPI.md). Only a well-formed stream request upgrades; anything else
/// stays HTTP and gets a normal answer.
struct StreamUpgrader: NIOTypedHTTPServerProtocolUpgrader {
    typealias UpgradeResult = ControlConnectionKind

    let supportedProtocol = ControlEndpoint.streamProtocol
    let requiredUpgradeHeaders: [String] = []
    let maximumFrameBytes: Int

    struct NotAStreamRequest: Error {}

    func buildUpgradeResponse(channel: Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<HTTPHeaders> {
        // `UpgradeRequestFilter` lets only well-formed stream requests get this far.
        guard StreamRequest(head: upgradeRequest) != nil else { return channel.eventLoop.makeFailedFuture(NotAStreamRequest()) }
        return channel.eventLoop.makeSucceededFuture(initialResponseHeaders)
    }

    func upgrade(channel: Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<ControlConnectionKind> {
        let maximumFrameBytes = self.maximumFrameBytes
        return channel.eventLoop.makeCompletedFuture {
            let ops = channel.pipeline.syncOperations
            // The request deadlines are for HTTP; a stream lives as long as its data flows.
            ops.removeHandler(context: try ops.context(name: RequestDeadlineHandler.name)).whenFailure { _ in }
            if let filter = try? ops.context(name: UpgradeRequestFilter.name) { ops.removeHandler(context: filter).whenFailure { _ in } }
            try ops.addHandler(ByteToMessageHandler(StreamFrameDecoder(maximumFrameBytes: maximumFrameBytes), maximumBufferSize: maximumFrameBytes + 4))
            try ops.addHandler(StreamFrameEncoder())
            StreamChannelTuning.apply(to: channel)
            let request = StreamRequest(head: upgradeRequest)!
            return .stream(try AppStreamChannel(wrappingChannelSynchronously: channel, configuration: .stream), request)
        }
    }
}

/// Sits before NIO's upgrade handler, which loses a request whose upgrade it cannot do
/// (an unknown protocol, or a stream request with bad parameters) and leaves the client
/// waiting. Such a request loses its `Upgrade` header here and is answered as plain HTTP,
/// with `Handoff-Refused-Upgrade` telling the router what was asked for.
final class UpgradeRequestFilter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    static let name = "upgrade-filter"
    static let refusedHeader = "Handoff-Refused-Upgrade"

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Only a connection's first request can upgrade, so only its head is looked at; the
        // filter leaves at once, before anything that is not HTTP could reach it.
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        if let asked = head.headers.first(name: "Upgrade"),
           !(asked.lowercased() == ControlEndpoint.streamProtocol && StreamRequest(head: head) != nil) {
            head.headers.remove(name: "Upgrade")
            head.headers.replaceOrAdd(name: UpgradeRequestFilter.refusedHeader, value: asked)
            let connection = head.headers[canonicalForm: "Connection"].filter { $0.lowercased() != "upgrade" }
            head.headers.remove(name: "Connection")
            for token in connection { head.headers.add(name: "Connection", value: String(token)) }
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
