import HandoffControlAPI
import NIOCore

/// Answers a connection refused at accept time (another user, too many connections) with
/// one complete HTTP error response. It sits in place of the HTTP handlers so the refusal
/// needs no request first. The client is likely still sending its request, so it only
/// half-closes, swallows what arrives, and closes fully once the client does or after
/// `linger`: closing at once could reset the connection before the client reads the answer.
final class RefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let error: APIError
    private let linger: TimeAmount
    private var sent = false

    init(_ error: APIError, linger: TimeAmount = .seconds(2)) {
        self.error = error
        self.linger = linger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        refuse(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    private func refuse(_ context: ChannelHandlerContext) {
        guard !sent else { return }
        sent = true
        let body = error.json.serialized() + "\n"
        let reason = error.status == 403 ? "Forbidden" : "Service Unavailable"
        let head = "HTTP/1.1 \(error.status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: head + body))).whenComplete { _ in
            bound.value.close(mode: .output, promise: nil)
        }
        let channel = context.channel
        context.eventLoop.scheduleTask(in: linger) { channel.close(promise: nil) }
    }
}
