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
    private let counter: PeerConnectionCounter?
    private var timer: Scheduled<Void>?

    /// `counter`: the listener's, for connections that came in (dialled ones are not counted).
    init(deadline: TimeAmount, account: ConnectionAccount, counter: PeerConnectionCounter? = nil) {
        self.deadline = deadline
        self.account = account
        self.counter = counter
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        // One transition, on the event loop, before any close can be accounted.
        if context.channel.isActive, account.markAuthenticated() { counter?.authenticated() }
    }
}

/// Whether a connection got past the hello, for the connection counter's books.
final class ConnectionAccount: Sendable {
    private let authenticated = NIOLockedValueBox(false)

    /// True the first time.
    func markAuthenticated() -> Bool {
        authenticated.withLockedValue { was in
            defer { was = true }
            return !was
        }
    }
    var isAuthenticated: Bool { authenticated.withLockedValue { $0 } }
}
