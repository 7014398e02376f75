import HandoffControlAPI
import NIOCore
import NIOHTTP1

/// Deadlines for slow or idle clients. A new connection must send a request head within
/// `requestTimeout`; between keep-alive requests it may idle for `idleTimeout`; both are
/// closed silently when they run out (no request, nothing to answer). A request whose head
/// arrived must arrive whole within `requestTimeout` or gets 408. Nothing is scheduled
/// while a response is being written, so event streams live as long as their client.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    static let name = "request-deadline"

    private let requestTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var inRequest = false

    init(requestTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context, requestTimeout, midRequest: false) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context, requestTimeout, midRequest: false)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            inRequest = true
            arm(context, requestTimeout, midRequest: true)
        case .body:
            break
        case .end:
            inRequest = false
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), !inRequest {
            arm(context, idleTimeout, midRequest: false)
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext, _ after: TimeAmount, midRequest: Bool) {
        deadline?.cancel()
        let bound = NIOLoopBound((context, self), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: after) {
            let (context, handler) = bound.value
            handler.fire(context, midRequest: midRequest)
        }
    }

    private func fire(_ context: ChannelHandlerContext, midRequest: Bool) {
        if midRequest && inRequest {
            let error = APIError(status: 408, code: "request_timeout",
                                 message: "the request did not arrive whole within \(self.requestTimeout.nanoseconds / 1_000_000) ms")
            let body = context.channel.allocator.buffer(string: error.json.serialized() + "\n")
            var headers = HTTPHeaders([("Content-Type", "application/json"), ("Connection", "close")])
            headers.add(name: "Content-Length", value: "\(body.readableBytes)")
            context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .requestTimeout, headers: headers))), promise: nil)
            context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            let closer = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(self.wrapOutboundOut(.end(nil))).whenComplete { _ in closer.value.close(promise: nil) }
        } else {
            context.close(promise: nil)
        }
    }
}
