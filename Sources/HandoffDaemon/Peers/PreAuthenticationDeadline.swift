import NIOCore

/// Bounds the time before a peer is authenticated: the TLS handshake and the hello must
/// both be done within `deadline`, or the connection is closed. Removed from the pipeline
/// after the hello, which cancels the timer for good and reports the connection as
/// authenticated (to the admission gate, for connections that came in).
final class PreAuthenticationDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    static let name = "pre-authentication-deadline"

    private let deadline: TimeAmount
    private let onAuthenticated: (@Sendable () -> Void)?
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount, onAuthenticated: (@Sendable () -> Void)? = nil) {
        self.deadline = deadline
        self.onAuthenticated = onAuthenticated
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        // Removal also happens when a closed channel's pipeline is torn down: only a live
        // connection counts as authenticated.
        if context.channel.isActive { onAuthenticated?() }
    }
}
