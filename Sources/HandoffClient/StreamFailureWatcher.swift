import HandoffStreamFrames
import NIOConcurrencyHelpers
import NIOCore

/// Notes an `error` frame as soon as it is read from the socket, before the app's reader
/// gets to it, and closes the connection: the stream is over both ways. An app busy
/// writing then learns *why* its next write failed (`Writer` throws what was seen here)
/// instead of a bare "closed", and stops writing into a stream that already failed.
final class StreamFailureWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = StreamFrame
    typealias InboundOut = StreamFrame

    /// What the watcher saw, shared with the stream's writer.
    final class Seen: Sendable {
        private let box = NIOLockedValueBox<HandoffClientError?>(nil)
        var error: HandoffClientError? { box.withLockedValue { $0 } }
        init() {}
        fileprivate func record(_ e: HandoffClientError) { box.withLockedValue { if $0 == nil { $0 = e } } }
    }

    let seen: Seen

    init(_ seen: Seen) { self.seen = seen }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        context.fireChannelRead(data)
        if case .error(let code, let message) = frame {
            seen.record(.stream(code: code, message: message))
            // After the frame went on: the reader still gets it, then the end.
            context.fireChannelReadComplete()
            context.close(promise: nil)
        }
    }
}
