import NIOConcurrencyHelpers
import NIOCore

/// Bounds the time before a peer is authenticated: the TLS handshake and the hello must
/// both be done within `deadline`, or the connection is closed. Removed from the pipeline
/// after the hello, which cancels the timer for good.
final class PreAuthenticationDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    static let name = "pre-authentication-deadline"

    private let deadline: TimeAmount
    private let account: ConnectionAccount
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount, account: ConnectionAccount) {
        self.deadline = deadline
        self.account = account
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if context.channel.isActive { account.markAuthenticated() }
    }
}

/// Whether a connection got past the hello, for the connection counter's books.
final class ConnectionAccount: Sendable {
    private let authenticated = NIOLockedValueBox(false)

    func markAuthenticated() { authenticated.withLockedValue { $0 = true } }
    var isAuthenticated: Bool { authenticated.withLockedValue { $0 } }
}
