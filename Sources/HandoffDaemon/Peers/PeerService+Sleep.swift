import HandoffCore
import HandoffControlAPI
import HandoffPeerProtocol
import HandoffStreamFrames
import NIOConcurrencyHelpers
import NIOCore

extension PeerService {
    /// How long after `prepare` without a wake-up the workstation is taken to be awake
    /// (the sleep was cancelled, or the agent went away): timers do not run while it sleeps.
    static let longestSleepPreparation: Int64 = 30
}

/// Whether a session agent guards this workstation's sleep (`POST /v1/sleep`).
enum SleepGuard: Sendable, Equatable {
    /// No agent said anything (none runs, or it is older than sleep guarding).
    case unknown
    /// The agent of this event session holds logind's delay lock.
    case guarded(session: String)
    /// The agent cannot take the lock, and why.
    case unguarded(String)
}

extension PeerService {
    /// What the session agent says about sleep (Docs/LocalAPI.md §22).
    func sleep(_ request: SleepRequest, session: String?) async throws(HandoffError) -> SleepAnswer {
        switch request.phase {
        case .guarded:
            guard let session = request.session ?? session else {
                throw HandoffError.badRequest("name the event session that holds the lock: \"session\" in the body or the \(ControlEndpoint.sessionHeader) header")
            }
            sleepGuard = .guarded(session: session)
            // Checked after: a session that closes meanwhile then clears the guard itself.
            guard await registry.isSessionOpen(session) else {
                sessionClosed(session)
                throw HandoffError(.conflict, code: "unknown_session", message: "no open event session \(session); open GET /v1/events first")
            }
            return SleepAnswer(phase: .guarded)
        case .unguarded:
            sleepGuard = .unguarded(request.detail ?? "the session agent cannot take logind's delay lock")
            return SleepAnswer(phase: .unguarded)
        case .prepare:
            // Until the wake-up no link is taken: one made in the moment before the machine
            // sleeps would hide the kept offer until its keepalive gave up.
            sleepEpoch &+= 1
            let epoch = sleepEpoch
            asleep = true
            let offered = await keeping.pushOwnOffer()
            // The agent gave up waiting, the machine slept and woke, and said so meanwhile.
            guard asleep, sleepEpoch == epoch else { return SleepAnswer(phase: .prepare, offered: offered, handedTo: 0) }
            let handedTo = offered ? await keeping.handedTo(Array(links.values)) : 0
            logger.info("going to sleep", metadata: ["offered": "\(offered)", "handed to": "\(handedTo)"])
            // The others notice at once and show what they keep instead of waiting for the
            // links to time out; each link closes once what it queued (the kept offer) is
            // written, and the answer waits for that (at most 2 s).
            let closing = Array(links.values)
            for link in closing { link.closeWhenSent() }
            await PeerService.closed(closing.map(\.channel), within: .seconds(2), on: group.any())
            // Sleep may be cancelled, or the agent gone before it could say it woke.
            asleepTimer?.cancel()
            asleepTimer = timers.schedule(in: .seconds(PeerService.longestSleepPreparation)) {
                _ = Task { await self.wake(reason: "no wake-up was announced") }
            }
            return SleepAnswer(phase: .prepare, offered: offered, handedTo: handedTo)
        case .resume:
            await wake(reason: "woke up")
            return SleepAnswer(phase: .resume)
        }
    }

    /// After sleep (or a sleep that did not happen): link again at once, whatever the backoff said.
    func wake(reason: String) async {
        asleepTimer?.cancel()
        asleepTimer = nil
        sleepEpoch &+= 1
        let was = asleep
        asleep = false
        logger.info("\(reason): linking again", metadata: ["was asleep": "\(was)"])
        perform(dialBook.networkChanged(dialFacts, at: clock.now()))
        // What was handed out before sleep is not what is offered from now on.
        await keeping.withdrawHandedOffer()
    }

    /// `handoffctl forget`: what is kept for one workstation (name or device ID), or for all.
    func forgetKept(device text: String?) async throws(HandoffError) -> KeptForgotten {
        let origins = try text.map { text throws(HandoffError) in try targets([text]) }
        return KeptForgotten(forgotten: await keeping.forget(origins))
    }

    /// An event session ended: if its agent guarded sleep, nobody does now.
    func sessionClosed(_ token: String) {
        if case .guarded(let s) = sleepGuard, s == token { sleepGuard = .unknown }
    }
}

extension PeerService {
    /// Waits until every channel has closed, or `limit` has passed.
    static func closed(_ channels: [Channel], within limit: TimeAmount, on loop: EventLoop) async {
        guard !channels.isEmpty else { return }
        let done = loop.makePromise(of: Void.self)
        let once = NIOLockedValueBox(false)
        let finish: @Sendable () -> Void = { if once.withLockedValue({ let first = !$0; $0 = true; return first }) { done.succeed(()) } }
        let timer = loop.scheduleTask(in: limit) { finish() }
        EventLoopFuture.whenAllComplete(channels.map(\.closeFuture), on: loop).whenComplete { _ in
            timer.cancel()
            finish()
        }
        try? await done.futureResult.get()
    }
}
