import HandoffKDEConnect
import HandoffSystem
import NIOCore
import NIOPosix

/// The socket pair handoffd started the endpoint with (its standard input and output):
/// handoffd's requests come in as events, answers and notices go out
/// (`KDEConnectBridgeLine`). When handoffd closes it (or dies), the endpoint stops.
struct BridgeWriter: @unchecked Sendable {
    let channel: Channel

    static func connect(descriptor: Int32, group: EventLoopGroup, events: EndpointEvents) async throws -> BridgeWriter {
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(CappedLineDecoder(limit: LineLimit(KDEConnectBridgeLine.limit))),
                        BridgeReader(events: events),
                    ])
                }
            }
            .withConnectedSocket(descriptor).get()
        return BridgeWriter(channel: channel)
    }

    func send(_ line: KDEConnectBridgeLine) {
        channel.writeAndFlush(channel.allocator.buffer(bytes: line.encoded), promise: nil)
    }
}

private final class BridgeReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let events: EndpointEvents

    init(events: EndpointEvents) { self.events = events }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        guard case .request(let id, let op, let fields)? = try? KDEConnectBridgeLine(parsing: line.readableBytesView) else { return }
        events.send(.request(id: id, op: op, fields: fields))
    }

    func channelInactive(context: ChannelHandlerContext) {
        events.send(.handoffdGone)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
