import HandoffAvahi
import HandoffControlAPI
import HandoffCore
import HandoffPeerProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// The connection of the pairing attempt under way, and how to tell it that the user
/// here confirmed.
struct PairingConnection {
    /// Given by PairingWindow when the attempt begins.
    var id: UInt64 = 0
    let channel: Channel
    let confirm: AsyncStream<Void>.Continuation
    /// The HOST:PORT the user gave (`pair --address`): where to dial the peer afterwards,
    /// since mDNS may not reach it.
    let dialledAddress: String?
    /// Where the peer accepts links (its address here and the port in its hello), and its
    /// certificate as this session saw it: pairing makes it a member and dials it at once.
    let peerAddress: String
    let listenPort: UInt16?
    let certificate: [UInt8]
}

/// Another workstation's pairing advertisement, as the link layer saw it in mDNS.
struct PairingCandidate: Sendable, Equatable {
    let tag: String
    let address: String
    let port: Int
    /// The name its advertisement gives (`n`), at most 64 bytes.
    let name: String
}

/// Pairing by a short code (Docs/PeerProtocol.md §16): `handoffctl pair` on both
/// workstations opens a window of two minutes; the two find each other through the
/// advertisement's `pair` tag (or `--address`), the one with the smaller tag dials, they
/// work out the code (PairingExchange), and each trusts the other once both users
/// confirmed it. The decisions are PairingWindow's, PairingDiscovery's and
/// PairingExchange's; this service performs them: the window and its timers, the one
/// attempt's connection, the trust and the membership a pairing makes. What touches the
/// advertisement or dialling is an `Action` for the link layer (`actions`), which dials
/// to pair and hands a pairing connection back after the hellos (`exchange`).
actor PairingService: Service, CustomStringConvertible {
    enum Action: Sendable, Equatable {
        /// The advertisement's `pair` tag changed (the window opened or closed): publish it.
        case advertise
        /// Dial this address to pair.
        case dial(address: String, port: Int, tag: String?, given: String?)
        /// Hand `consider` the pairing advertisements seen now (the window opened, or a
        /// dial failed and another address may do).
        case reconsider
        /// What the membership the pairing made asks of the links.
        case account(AccountService.Change)
        /// Paired: dial it as a member, at `address` when one is known (the one the user
        /// gave, or where it just was), in `domain`.
        case paired(DeviceID, address: String?, domain: String)
    }

    static let redialInterval: Int64 = 2_000_000_000

    nonisolated var description: String { "pairing" }
    /// What the link layer is asked to do, in order.
    nonisolated let actions: AsyncStream<Action>
    private let actionSink: AsyncStream<Action>.Continuation
    /// Whether the TLS verifier lets strangers in (read on NIO threads, hence the box).
    nonisolated let windowOpen = NIOLockedValueBox(false)
    /// The advertisement's `pair` tag while the window is open.
    nonisolated let advertisedTag = NIOLockedValueBox<String?>(nil)
    private let own: DeviceID
    private let trust: TrustStore
    private let accounts: AccountService
    private let registry: ActivityRegistry
    private let clock: any WallClock
    private let timers: any Timers
    private let logger: Logger
    private var pairing = PairingWindow()
    private var pairingAttempt: PairingConnection?
    private var pairingTimer: ScheduledTimer?
    /// The next dial of the address given to `pair --address`, while it is not pairing yet.
    private var pairingRedial: ScheduledTimer?
    /// Which pairing advertisements were dialled or announced.
    private var pairingFinder = PairingDiscovery()

    init(own: DeviceID, trust: TrustStore, accounts: AccountService, registry: ActivityRegistry, clock: any WallClock, timers: any Timers, logger: Logger) {
        self.own = own
        self.trust = trust
        self.accounts = accounts
        self.registry = registry
        self.clock = clock
        self.timers = timers
        self.logger = logger
        (actions, actionSink) = AsyncStream.makeStream(of: Action.self)
    }

    /// Nothing runs until asked; at the daemon's stop the window's timers go and the
    /// attempt's connection closes.
    func run() async throws {
        try? await gracefulShutdown()
        pairingTimer?.cancel()
        pairingRedial?.cancel()
        pairingAttempt?.channel.close(promise: nil)
        actionSink.finish()
    }

    func isOpen() -> Bool { pairing.isOpen(at: clock.now()) }

    // MARK: - The control API's side

    func open(address: String?) async throws(HandoffError) -> PairingStatus {
        var target: (host: String, port: Int)?
        if let address { target = try PeerService.hostAndPort(address) }
        // Pairing here adds the other workstation with a statement this device signs: at
        // its cap, the pair would trust each other but no other member would hear of it.
        guard accounts.current.canSign(own) else {
            throw HandoffError(.conflict, code: "account_full",
                               message: "this workstation has signed \(AccountLog.maximumStatementsPerSigner) changes to the account of devices, the most one device may: pair the new workstation with another member of the account instead")
        }
        let now = clock.now()
        if !pairing.isOpen(at: now) {
            pairing.open(at: now, tag: String(ActivityID.random().rawValue.prefix(12)))
            windowOpen.withLockedValue { $0 = true }
            advertisedTag.withLockedValue { $0 = pairing.tag }
            pairingFinder.windowOpened()
            pairingTimer?.cancel()
            pairingTimer = timers.schedule(in: .nanoseconds(PairingWindow.duration)) {
                _ = Task { await self.pairingExpired() }
            }
            actionSink.yield(.advertise)
            logger.info("pairing window open", metadata: ["seconds": "\(PairingWindow.duration / 1_000_000_000)"])
        }
        if let target {
            actionSink.yield(.dial(address: target.host, port: target.port, tag: nil, given: address))
        } else {
            actionSink.yield(.reconsider)
        }
        await announcePairing()
        return pairing.status(at: now)
    }

    func status() -> PairingStatus { pairing.status(at: clock.now()) }

    func confirm(code given: String) async throws(HandoffError) -> PairingStatus {
        let code = given.filter { $0 != " " && $0 != "-" }
        guard code.count == 6, code.allSatisfy(\.isASCII), code.allSatisfy(\.isNumber) else {
            throw HandoffError.badRequest("a pairing code is 6 digits, as both screens show it")
        }
        guard let attempt = pairingAttempt else {
            throw HandoffError(.conflict, code: "no_code", message: "no pairing code is shown here yet: run `handoffctl pair` on both workstations first")
        }
        switch pairing.confirmHere(code) {
        case .nothingToConfirm:
            throw HandoffError(.conflict, code: "no_code", message: "no pairing code is shown here yet: the two workstations are still working it out")
        case .mismatch:
            let shown = pairing.attempt?.code ?? "?"
            let reason = PairingFailure.codeMismatch(given: code, shown: shown)
            // Not another attempt in this window: a wrong code may mean someone is listening.
            pairing.close(reason)
            closePairingWindow()
            logger.warning("pairing code mismatch", metadata: ["shown": "\(shown)"])
            await announcePairing()
            throw HandoffError(.conflict, code: "code_mismatch", message: reason.description)
        case .confirmed(let trustNow):
            attempt.confirm.yield(())
            if trustNow { await completePairing(attempt.id) }
        }
        await announcePairing()
        return pairing.status(at: clock.now())
    }

    func cancel() async -> PairingStatus {
        if pairing.isOpen(at: clock.now()) {
            pairing.close(.cancelled)
            closePairingWindow()
            await announcePairing()
        }
        return pairing.status(at: clock.now())
    }

    private func pairingExpired() async {
        pairing.expire(at: clock.now())
        guard !pairing.isOpen(at: clock.now()) else { return }
        closePairingWindow()
        await announcePairing()
    }

    /// After the window closed (paired, expired, cancelled, too many attempts).
    private func closePairingWindow() {
        windowOpen.withLockedValue { $0 = false }
        pairingTimer?.cancel()
        pairingTimer = nil
        pairingRedial?.cancel()
        pairingRedial = nil
        pairingAttempt?.channel.close(promise: nil)
        advertisedTag.withLockedValue { $0 = nil }
        actionSink.yield(.advertise)
    }

    private func announcePairing() async {
        await registry.broadcast(.pairing(pairing.status(at: clock.now())))
    }

    private func isRemoved(_ id: DeviceID) -> Bool { accounts.current.membership.removed.contains { $0.id == id } }

    // MARK: - Discovery

    /// The pairing advertisements seen now: dial one, or tell the user (`PairingDiscovery`).
    func consider(_ candidates: [PairingCandidate]) {
        let ours = pairing.isOpen(at: clock.now()) ? pairing.tag : nil
        for c in candidates {
            switch pairingFinder.found(tag: c.tag, address: c.address, port: c.port, ours: ours, attemptRunning: pairing.attempt != nil) {
            case .dial(let address, let port, let tag):
                actionSink.yield(.dial(address: address, port: port, tag: tag, given: nil))
            case .announce:
                let name = AccountStatement.cut(c.name, toBytes: 64)
                let event = ControlEvent.pairingAvailable(name: name.isEmpty ? "a workstation" : name, address: PeerService.tidy([c.address]).first ?? "")
                Task { await registry.broadcast(event) }
            case nil:
                break
            }
        }
    }

    /// A dial to pair ended before the exchange began (refused at the handshake, or in its
    /// first message), or could not connect: say so, or `pair` would wait in silence until
    /// the window closes.
    func dialFailed(_ failure: PairingFailure, tag: String?, address: String, port: Int, given: String?) async {
        if let tag {
            // Another of its addresses may do: try those not tried yet.
            pairingFinder.dialFailed(tag: tag, address: address)
            actionSink.yield(.reconsider)
        }
        guard pairing.attempt == nil, pairing.isOpen(at: clock.now()) else { return }
        // Said once, not at every dial again.
        if pairing.lastFailure != failure {
            logger.info("could not pair with the workstation dialled", metadata: ["address": "\(address)", "port": "\(port)", "why": "\(failure)"])
        }
        pairing.noteFailure(failure)
        await announcePairing()
        // An address the user gave: dialled again while the window is open, so it does not
        // matter on which workstation `pair` ran first (the other may not be pairing yet,
        // or not be up). A wrong code or a refusal for good ends the window or the attempt
        // by other paths; this only waits for the other side to be ready.
        guard let given, failure.isWorthRedialling else { return }
        pairingRedial?.cancel()
        pairingRedial = timers.schedule(in: .nanoseconds(Self.redialInterval)) {
            _ = Task { await self.redial(host: address, port: port, given: given) }
        }
    }

    private func redial(host: String, port: Int, given: String) {
        pairingRedial = nil
        guard pairing.isOpen(at: clock.now()), pairing.attempt == nil else { return }
        actionSink.yield(.dial(address: host, port: port, tag: nil, given: given))
    }

    // MARK: - One pairing connection

    /// Runs the code exchange on a connection whose hellos are done, then waits for the
    /// users' confirmations. Whatever happens, the connection carries nothing else.
    nonisolated func exchange(with peer: DeviceID, name: String, address: String, dialledAddress: String?, listenPort: UInt16?, certificate: [UInt8],
                          role: PairingExchange.Role,
                          messages: inout NIOAsyncChannelInboundStream<PeerMessage>.AsyncIterator,
                          outbound: NIOAsyncChannelOutboundWriter<PeerMessage>, channel: Channel) async {
        let (confirms, sink) = AsyncStream.makeStream(of: Void.self)
        let connection = PairingConnection(channel: channel, confirm: sink, dialledAddress: dialledAddress, peerAddress: address,
                                           listenPort: listenPort, certificate: certificate)
        guard let id = await beginPairing(peer: peer, name: name, connection) else {
            // Only the removed device holds the key of the certificate it showed: telling it
            // why reveals nothing to anyone else.
            if await isRemoved(peer) {
                try? await outbound.write(.error(code: "removed", message: "this device was removed from the account of devices, and removal is final: it cannot pair again"))
            } else {
                try? await outbound.write(.error(code: "pairing-closed", message: "this workstation is not pairing now (or is pairing with another): run `handoffctl pair` on it"))
            }
            return
        }
        // The users need a moment to compare codes: the pre-authentication deadline gives
        // way to the pairing window's own.
        try? await channel.pipeline.removeHandler(name: PreAuthenticationDeadline.name).get()
        // Until the code is shown, a short deadline still holds: a stranger who connects
        // and says nothing must not keep the window's one attempt slot.
        let noCode = channel.eventLoop.scheduleTask(in: .seconds(10)) { channel.close(promise: nil) }
        let writer = Task { for await _ in confirms { try? await outbound.write(.pairConfirm) } }
        var exchange = PairingExchange(role: role, own: own, peer: peer)
        var reason = PairingFailure.otherEnded
        do {
            for m in exchange.opening() { try await outbound.write(m) }
            loop: while let m = try await messages.next() {
                switch m {
                case .pairCommit, .pairNonce:
                    for reply in try exchange.receive(m) { try await outbound.write(reply) }
                    if let code = exchange.code {
                        noCode.cancel()
                        await pairingCodeReady(id, code: code)
                    }
                case .pairConfirm:
                    guard exchange.code != nil else {
                        throw PairingExchange.Failure(code: "unexpected-message", description: "a confirmation before the code was worked out")
                    }
                    if await pairingConfirmedThere(id) { break loop }
                case .error(_, let message):
                    reason = .otherStopped(message)
                    break loop
                default:
                    throw PairingExchange.Failure(code: "unexpected-message", description: "only pairing messages belong on a pairing connection")
                }
            }
        } catch let f as PairingExchange.Failure {
            reason = .exchangeFailed(f)
            try? await outbound.write(.error(code: f.code, message: f.description))
        } catch {
            // The other side may have said why and closed before our write went out: its
            // reason is still there to read.
            reason = await Self.statedReason(&messages) ?? .connectionFailed("\(error)")
        }
        // Our own pairConfirm may still be queued (the user confirmed just as the other
        // side's arrived): let the writer send it before the connection closes.
        noCode.cancel()
        sink.finish()
        await writer.value
        await pairingAttemptEnded(id, reason: reason)
    }

    /// The reason in an error message still to be read on a pairing connection that failed.
    private static func statedReason(_ messages: inout NIOAsyncChannelInboundStream<PeerMessage>.AsyncIterator) async -> PairingFailure? {
        for _ in 0..<4 {
            guard let m = try? await messages.next() else { return nil }
            if case .error(_, let message) = m { return .otherStopped(message) }
        }
        return nil
    }

    private func beginPairing(peer: DeviceID, name given: String, _ c: PairingConnection) async -> UInt64? {
        let shown = PeerService.tidy([c.peerAddress]).first ?? c.peerAddress
        let name = AccountStatement.cut(given, toBytes: AccountStatement.maximumName)  // the peer chose it
        guard !isRemoved(peer) else {
            logger.warning("refused to pair with a device removed from the account", metadata: ["id": "\(peer.shortID)"])
            return nil
        }
        guard let id = pairing.begin(peer: peer, name: name, address: shown, at: clock.now()) else { return nil }
        var attempt = c
        attempt.id = id
        pairingAttempt = attempt
        logger.info("pairing with a workstation", metadata: ["name": "\(name)", "address": "\(shown)", "id": "\(peer.shortID)"])
        await announcePairing()
        return id
    }

    private func pairingCodeReady(_ id: UInt64, code: String) async {
        pairing.codeReady(id, code: code)
        await announcePairing()
    }

    /// The other side confirmed; true when pairing is complete (ours had confirmed).
    private func pairingConfirmedThere(_ id: UInt64) async -> Bool {
        let both = pairing.confirmedThere(id)
        if both { await completePairing(id) } else { await announcePairing() }
        return both
    }

    private func completePairing(_ id: UInt64) async {
        guard let a = pairing.attempt, a.id == id else { return }
        // Taken before the writes below: the other side may close the connection meanwhile.
        let connection = pairingAttempt
        let given = connection?.dialledAddress
        let wasTrusted = trust.isTrusted(a.peer)
        // "Paired" is said only once the trust and the membership are on disk: a crash
        // right after it loses neither. (Outside a request, nothing else waits for them.)
        let saved = StateWriter.Tickets()
        do {
            try await StateWriter.$requestTickets.withValue(saved) { try await trust.trust(a.peer, name: a.name, address: given, at: clock.now()) }
        } catch {
            pairing.attemptEnded(id, reason: .notSaved("\(error)"))
            connection?.channel.close(promise: nil)
            await announcePairing()
            return
        }
        // Cancelled or timed out while the trust was being written: it does not stand.
        guard pairing.attempt?.id == id else {
            if !wasTrusted { trust.untrust(a.peer) }
            return
        }
        if let connection, connection.certificate.count <= AccountStatement.maximumCertificate {
            let change = await StateWriter.$requestTickets.withValue(saved) { await accounts.add(a.peer, name: a.name, certificate: connection.certificate) }
            actionSink.yield(.account(change))
        }
        if let failure = await StateWriter.shared.settle(saved.all) {
            // Rewritten when the disk allows (StateWriter); the doctor reports it meanwhile.
            logger.error("paired, but the trust or the account could not be written yet", metadata: ["error": "\(failure)"])
        }
        // The trust and the membership stand even if the window closed while they were
        // written (only a stalled disk takes that long).
        pairing.succeeded(id)
        let channel = connection?.channel
        pairingAttempt = nil
        windowOpen.withLockedValue { $0 = false }
        advertisedTag.withLockedValue { $0 = nil }
        pairingTimer?.cancel()
        pairingTimer = nil
        pairingRedial?.cancel()
        pairingRedial = nil
        actionSink.yield(.advertise)
        logger.info("paired", metadata: ["name": "\(a.name)", "id": "\(a.peer.shortID)"])
        if let given {
            actionSink.yield(.paired(a.peer, address: given, domain: "static"))
        } else if let connection, let port = connection.listenPort,
                  !(connection.peerAddress.lowercased().hasPrefix("fe80:") && !connection.peerAddress.contains("%")) {
            // Where it just was: its advertisement's tag is made with another key until
            // the two have linked once and agreed on one. (A link-local address without
            // its scope cannot be dialled: the side that dialled to pair has it.)
            let host = PeerService.tidy([connection.peerAddress]).first ?? connection.peerAddress
            actionSink.yield(.paired(a.peer, address: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)", domain: "paired"))
        } else {
            actionSink.yield(.paired(a.peer, address: nil, domain: "paired"))
        }
        await announcePairing()
        // The other side closes once it has our confirmation; if it does not, we do, once
        // ours has surely left.
        if let channel { channel.eventLoop.scheduleTask(in: .seconds(3)) { channel.close(promise: nil) } }
    }

    private func pairingAttemptEnded(_ id: UInt64, reason: PairingFailure) async {
        if pairingAttempt?.id == id { pairingAttempt = nil }
        guard let a = pairing.attempt, a.id == id else { return }
        // Both confirmed: the other side, done first, closes the connection while this
        // side is still writing the trust and the membership (completePairing ends the
        // attempt). Ending it here failed the pairing on this side only.
        if a.confirmedHere && a.confirmedThere { return }
        pairing.attemptEnded(id, reason: reason)
        logger.info("pairing attempt ended", metadata: ["why": "\(reason)"])
        if !pairing.isOpen(at: clock.now()) { closePairingWindow() }
        await announcePairing()
    }
}
