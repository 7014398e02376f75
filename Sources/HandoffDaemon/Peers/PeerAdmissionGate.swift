import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Runs `PeerAdmission` for the peer listener, against real channels: admits or refuses
/// each accepted connection, closes connections evicted to make room, and tells the log
/// what it refused through `RefusalSummary` (rate-limited: a flood is a few lines).
/// Called from any event loop.
final class PeerAdmissionGate: Sendable {
    private struct State {
        var admission: PeerAdmission
        var summary: RefusalSummary
        /// Pending connections, which eviction may close.
        var channels: [PeerAdmission.Ticket: Channel] = [:]
        /// Admitted by the server channel's filter, not yet picked up by the child initializer.
        var handedOver: [ObjectIdentifier: PeerAdmission.Ticket] = [:]
    }

    private let state: NIOLockedValueBox<State>
    private let logger: Logger
    private let timers: EventLoop

    init(limits: PeerAdmission.Limits, summaryInterval: TimeAmount = .seconds(10), logger: Logger, timers: EventLoop) {
        state = NIOLockedValueBox(State(admission: PeerAdmission(limits: limits), summary: RefusalSummary(interval: summaryInterval)))
        self.logger = logger
        self.timers = timers
    }

    /// A ticket for an admitted connection (released when it closes), nil for a refused one,
    /// which the caller must close without doing any work for it.
    func admit(_ channel: Channel) -> PeerAdmission.Ticket? {
        let source = PeerSource(channel.remoteAddress)
        let (decision, evicted, action) = state.withLockedValue { s -> (PeerAdmission.Decision, Channel?, RefusalSummary.Action) in
            let decision = s.admission.arrive(from: source, at: .now())
            switch decision {
            case .admit(let ticket, let evicting):
                s.channels[ticket] = channel
                let evicted = evicting.flatMap { s.channels.removeValue(forKey: $0) }
                if let e = evicted { s.handedOver[ObjectIdentifier(e)] = nil }
                let action = evicted.map { s.summary.refused(.evicted, from: PeerSource($0.remoteAddress)) } ?? .none
                return (decision, evicted, action)
            case .refuse(let reason):
                return (decision, nil, s.summary.refused(.refused(reason), from: source))
            }
        }
        evicted?.close(promise: nil)
        perform(action)
        guard case .admit(let ticket, _) = decision else { return nil }
        channel.closeFuture.whenComplete { _ in self.closed(ticket) }
        return ticket
    }

    /// The ticket `admit` gave `channel` in the server channel's pipeline, for its initializer.
    func takeTicket(_ channel: Channel) -> PeerAdmission.Ticket? {
        state.withLockedValue { $0.handedOver.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    fileprivate func handOver(_ ticket: PeerAdmission.Ticket, _ channel: Channel) {
        state.withLockedValue { $0.handedOver[ObjectIdentifier(channel)] = ticket }
    }

    /// The connection's hello arrived: it is a trusted peer now, never evicted.
    func authenticated(_ ticket: PeerAdmission.Ticket) {
        state.withLockedValue { s in
            s.admission.authenticate(ticket, at: .now())
            s.channels[ticket] = nil
        }
    }

    private func closed(_ ticket: PeerAdmission.Ticket) {
        state.withLockedValue { s in
            s.admission.close(ticket)
            if let c = s.channels.removeValue(forKey: ticket) { s.handedOver[ObjectIdentifier(c)] = nil }
        }
    }

    /// (unauthenticated, authenticated) connections now, for tests and status.
    var counts: (unauthenticated: Int, authenticated: Int) {
        state.withLockedValue { ($0.admission.unauthenticatedCount, $0.admission.authenticatedCount) }
    }

    private func perform(_ action: RefusalSummary.Action) {
        guard case .logAndStartInterval(let line) = action else { return }
        logger.warning("\(line)")
        scheduleSummary()
    }

    private func scheduleSummary() {
        let interval = state.withLockedValue { $0.summary.interval }
        // Only while refusals go on: an idle daemon has no timer.
        timers.scheduleTask(in: interval) {
            let (line, again) = self.state.withLockedValue { $0.summary.intervalEnded() }
            if let line { self.logger.warning("\(line)") }
            if again { self.scheduleSummary() }
        }
    }
}

/// In the listening socket's pipeline, ahead of NIO's accept handling: each accepted
/// connection is admitted or refused here, before it is registered, configured or given
/// an initializer. A refused one is closed on the spot, which keeps a flood of strangers
/// down to an accept and a close each.
final class PeerAdmissionFilter: ChannelInboundHandler {
    typealias InboundIn = Channel
    typealias InboundOut = Channel

    private let gate: PeerAdmissionGate

    init(gate: PeerAdmissionGate) { self.gate = gate }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let child = unwrapInboundIn(data)
        guard let ticket = gate.admit(child) else {
            child.close(promise: nil)
            return
        }
        gate.handOver(ticket, child)
        context.fireChannelRead(data)
    }
}

/// Sits alone in the pipeline of a connection refused at accept time: closes it as soon
/// as it is registered, and drops whatever arrives meanwhile. No TLS, no framing, no
/// typed handler ever sees its bytes.
final class RefusedConnectionHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { context.close(promise: nil) }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
