import HandoffAvahi
import HandoffCore
import HandoffControlAPI
import HandoffStreamFrames
import HandoffPeerProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOExtras
import NIOPosix
import NIOSSL
import ServiceLifecycle

typealias PeerChannel = NIOAsyncChannel<PeerMessage, PeerMessage>

/// Everything between this workstation and the user's others: the TLS listener, the
/// mDNS advertisement and browsing, one connection per trusted peer, their offers, and
/// continuing. mDNS is only a hint to (re)connect; changes travel over the connections.
public actor PeerService: Service {
    let identity: DeviceIdentity
    let trust: TrustStore
    let registry: ActivityRegistry
    let streams: StreamBroker
    let agent: SessionAgentBroker
    let settings: PeerServiceSettings
    let deviceName: String
    let limits: ActivityLimits
    let tls: PeerTLS
    /// How every connection this side dials starts (TLS, deadline, framing).
    let dialer: PeerDialer
    /// Continuation streams (a service of its own; a stream connection is handed to it
    /// after the hellos).
    let peerStreams: PeerStreamService
    let group: EventLoopGroup
    let logger: Logger
    /// Where the time comes from, and where what is due later is scheduled (manual in tests).
    let clock: any WallClock
    let timers: any Timers
    let avahi: AvahiDiscovery?
    let admission: PeerAdmissionGate
    /// Where offers eligible for search are remembered (nil: no history).
    let history: ActivityHistory?
    /// Apps' restoration state, some of which may go with a continued activity.
    let restoration: RestorationStore?

    /// Every instance known, and what dialling it taught (`DialBook`).
    var dialBook: DialBook
    var services: [ServiceKey: ServiceRecord] { dialBook.services }
    /// The links, the offers on both sides, the devices met and the streams (`PeerBook`).
    var book: PeerBook<PeerLink>
    var links: [DeviceID: PeerLink] { book.links }
    var devices: [DeviceID: DeviceRecord] { book.devices }
    var listenPort = 0
    var discovery: DiscoveryStatus = .unavailable("peer discovery is starting")
    var advertisedName: String?
    /// Connections the listener accepted, owned here until a task serves them (see
    /// `adopt`); false once the listener is closed and accepting has ended.
    var accepted: [PeerChannel] = []
    var accepting = true
    /// Connections that came in and have not said hello yet, by the address they came
    /// from: an instance found there waits for them rather than dialling too (`DialBook`).
    var inboundPending: [Substring: Int] = [:]
    /// Continued here lately, for the apps launched to continue them.
    var continued = ContinuedActivities()
    /// Pairing by code (a service of its own; its connections come from here).
    let pairing: PairingService
    /// The private advertisement: the account's key, this rotation's random names, nonce
    /// and hint (`AdvertisementRotation`), and the timer of the next rotation.
    var rotation: AdvertisementRotation
    var rotationTimer: ScheduledTimer?
    /// The change hint's TXT update, while one is due (`hintDelay`).
    var hintTimer: ScheduledTimer?
    /// This host's addresses and routes, kept current by `NetworkWatch`.
    var network = NetworkWatch.snapshot()
    /// Offers kept for members that sleep, and what this device issued (a service of its own).
    let keeping: KeepingService
    /// The account's newest copy (a service of its own, told of links as they come and go).
    let clipboard: ClipboardService
    /// Whether the session agent holds logind's delay lock (for doctor).
    var sleepGuard = SleepGuard.unknown
    /// Between `prepare` and the wake-up: no link is taken, and the TLS handshake of
    /// every connection that comes in fails (read on NIO threads, hence the box), so that
    /// the other side never believes it linked with a workstation about to freeze.
    var asleep = false {
        didSet { sleeping.withLockedValue { $0 = asleep } }
    }
    let sleeping = NIOLockedValueBox(false)
    /// Counts sleeps and wake-ups: a `prepare` that awaited across a wake-up can tell.
    var sleepEpoch: UInt64 = 0
    var asleepTimer: ScheduledTimer?
    /// The account of devices (a service of its own; `account` reads it as it stands).
    let accounts: AccountService
    let accountStore: AccountStore
    let work: AsyncStream<Work>.Continuation
    private let workStream: AsyncStream<Work>
    /// Peer events for the control API, in the order they happened (`PeerEvents`).
    let peerEvents: AsyncStream<ControlEvent>.Continuation
    private let peerEventStream: AsyncStream<ControlEvent>

    enum Work: Sendable {
        /// Serve the oldest connection in `accepted` (the channel is never in the stream:
        /// a stream drops what it holds when it ends).
        case serveAccepted
        case dial(ServiceKey, address: String, port: Int)
        case dialToPair(address: String, port: Int, tag: String?, given: String?)

    }

    init(identity: DeviceIdentity, trust: TrustStore, accountStore: AccountStore, registry: ActivityRegistry, streams: StreamBroker, agent: SessionAgentBroker, deviceName: String,
                limits: ActivityLimits, settings: PeerServiceSettings, tls: PeerTLS, dialer: PeerDialer, events: PeerEvents, accounts: AccountService, clipboard: ClipboardService, keeping: KeepingService,
                peerStreams: PeerStreamService, pairing: PairingService,
                discovery avahi: AvahiDiscovery? = nil, history: ActivityHistory? = nil,
                restoration: RestorationStore? = nil, group: EventLoopGroup, logger: Logger, clock: any WallClock = SystemClock(),
                timers: (any Timers)? = nil) throws {
        self.clock = clock
        self.timers = timers ?? EventLoopTimers(loop: group.any())
        self.avahi = avahi
        self.history = history
        self.restoration = restoration
        self.identity = identity
        self.trust = trust
        self.registry = registry
        self.streams = streams
        self.agent = agent
        self.deviceName = deviceName
        self.limits = limits
        self.settings = settings
        self.group = group
        self.logger = logger
        self.tls = tls
        self.dialer = dialer
        self.peerStreams = peerStreams
        self.pairing = pairing
        if avahi == nil { discovery = .unavailable("discovery is turned off (--no-discovery)") }
        admission = PeerAdmissionGate(limits: settings.admissionLimits, logger: logger, timers: group.any())
        dialBook = DialBook(policy: DialPolicy(minimumBackoff: settings.minimumBackoff.nanoseconds, maximumBackoff: settings.maximumBackoff.nanoseconds,
                                                    maximumStaticBackoff: settings.maximumStaticBackoff.nanoseconds,
                                                    untrustedRetry: settings.untrustedRetry.nanoseconds))
        book = PeerBook()
        self.clipboard = clipboard
        self.accountStore = accountStore
        self.keeping = keeping
        self.accounts = accounts
        var keys = accountStore.keys.load(logger: logger)
        if keys.isEmpty {
            keys = [AdvertisementKey.random(generation: 1)]
            accountStore.keys.save(keys)
        }
        rotation = AdvertisementRotation(keys: keys, periodSeconds: settings.advertisementRotationSeconds)
        (workStream, work) = AsyncStream.makeStream(of: Work.self)
        (peerEventStream, peerEvents) = (events.stream, events.continuation)
    }

    // MARK: - Running

    public func run() async throws {
        let server = try await bindListener()
        listenPort = server.localAddress?.port ?? 0
        await peerStreams.listening(on: listenPort)
        logger.info("peer listener ready", metadata: ["port": "\(listenPort)", "device": "\(identity.deviceID)"])
        // Published when Avahi connects (the discovery service starts it, and stops it
        // after this service has stopped).
        if avahi != nil { rotateAdvertisement() }
        for peer in settings.staticPeers { addStaticPeer(peer) }
        await perform(await accounts.reconcileTrust())
        let account = self.account
        await keeping.load { account.memberKey($0) }
        for entry in trust.all { if let address = entry.address { addStaticPeer(address) } }
        let workStream = self.workStream
        let peerEventStream = self.peerEventStream
        let registry = self.registry
        let avahi = self.avahi
        let (group, logger, network) = (self.group, self.logger, self.network)
        // Graceful shutdown closes the listener; accepting ends when it is closed, the work
        // loop once it has given every accepted connection a task; then the rest is
        // cancelled, and every connection ends through `executeThenClose`.
        do { try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { tasks in
                tasks.addTask {
                    try? await withTaskCancellationHandler {
                        try await server.closeFuture.get()
                    } onCancel: {
                        server.close(promise: nil)
                    }
                    await self.acceptingEnded()
                }
                tasks.addTask {
                    for await offer in await registry.watchOffer() { await self.offerChanged(offer) }
                }
                tasks.addTask {
                    for await event in peerEventStream { await registry.broadcast(event) }
                }
                let pairing = self.pairing
                tasks.addTask {
                    for await action in pairing.actions { await self.perform(action) }
                }
                tasks.addTask {
                    await NetworkWatch.run(group: group, logger: logger, initial: network) { snapshot, change in
                        await self.networkChanged(snapshot, change)
                    }
                }
                if let avahi {
                    tasks.addTask {
                        for await event in avahi.events { await self.discovered(event) }
                    }
                }
                for await item in workStream {
                    switch item {
                    case .serveAccepted:
                        tasks.addTask { if let channel = await self.takeAccepted() { await self.serve(channel, dialled: nil) } }
                    case .dial(let key, let address, let port):
                        tasks.addTask { await self.dial(key, address: address, port: port) }
                    case .dialToPair(let address, let port, let tag, let given):
                        tasks.addTask { await self.dialToPair(address: address, port: port, tag: tag, given: given) }
                    }
                }
                tasks.cancelAll()
            }
        } onGracefulShutdown: {
            server.close(promise: nil)
        } } catch is CancellationError {}
        server.close(promise: nil)
        await stop()
    }

    func enqueue(_ item: Work) { work.yield(item) }

    /// An accepted connection, from the listener's initializer. NIO traps on a
    /// NIOAsyncChannel released without `executeThenClose` ("Deinited NIOAsyncWriter
    /// without calling finish()"), so from the initializer on a task owns it, then this
    /// actor, then the task that serves it; none of them ever drops it. (With NIO's async
    /// `bind`, a connection accepted while the daemon stopped was dropped by the
    /// listener's stream, and peers dialling back as their links closed crashed it with
    /// SIGILL: scripts/bench/bench-scale, swift-nio#2637.)
    func adopt(_ channel: PeerChannel) async {
        guard accepting else {
            try? await channel.executeThenClose { _, _ in }  // stopping: close it properly
            return
        }
        accepted.append(channel)
        if let remote = channel.channel.remoteAddress?.ipAddress { inboundPending[DialFacts.host(remote), default: 0] += 1 }
        work.yield(.serveAccepted)
    }

    private func takeAccepted() -> PeerChannel? { accepted.isEmpty ? nil : accepted.removeFirst() }

    /// The listener is closed: what it accepted from now on is closed, not served.
    private func acceptingEnded() {
        accepting = false
        work.finish()
    }

    /// The links and what was accepted; streams, the session agent's requests, the history
    /// and Avahi stop after this, as services of their own (`Daemon`).
    private func stop() async {
        rotationTimer?.cancel()
        hintTimer?.cancel()
        perform(book.closeAll())
        accepting = false
        work.finish()
        // Accepted but never served (the work loop was cancelled before it got to them).
        let unserved = accepted
        accepted = []
        for channel in unserved { try? await channel.executeThenClose { _, _ in } }
    }

    private func bindListener() async throws -> Channel {
        let tls = self.tls
        let own = identity.deviceID
        let trust = self.trust
        let pairingOpen = pairing.windowOpen
        let sleeping = self.sleeping
        let admission = self.admission
        let maxFrame = settings.maximumFrameBytes
        let deadline = settings.handshakeTimeout + settings.helloTimeout
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { server in
                server.eventLoop.makeCompletedFuture { try server.pipeline.syncOperations.addHandler(PeerAdmissionFilter(gate: admission)) }
            }
            .childChannelOption(.socketOption(.so_keepalive), value: 1)
            .childChannelOption(PeerService.keepIdle, value: 10)
            .childChannelOption(PeerService.keepInterval, value: 5)
            .childChannelOption(PeerService.keepCount, value: 3)
            .childChannelInitializer { channel in
                // Admitted by PeerAdmissionFilter already (refused ones never get here); a
                // connection without a ticket is refused all the same: its pipeline holds
                // nothing but the handler that closes it, so none of its bytes can reach a
                // handler expecting peer messages.
                guard let ticket = admission.takeTicket(channel) else {
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(RefusedConnectionHandler())
                    }
                }
                let remote = channel.remoteAddress?.ipAddress ?? "?"
                return channel.eventLoop.makeCompletedFuture { () throws in
                    // The handshake and the hello must both be done in time.
                    try channel.pipeline.syncOperations.addHandler(
                        PreAuthenticationDeadline(deadline: deadline) { admission.authenticated(ticket) }, name: PreAuthenticationDeadline.name)
                    // While a pairing window is open, a stranger's certificate is let through:
                    // its connection may only pair (`serve` checks the hello's purpose).
                    let verify = PeerTLS.verifier(own: own, isTrusted: {
                        !sleeping.withLockedValue { $0 } && (trust.isTrusted($0) || pairingOpen.withLockedValue { $0 })
                    }) { verdict in
                        if case .untrusted(let id) = verdict {
                            Task { await self.noteUntrusted(id, address: remote, name: nil) }
                        }
                    }
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.serverContext, customVerificationCallback: verify))
                    try PeerService.addFraming(channel, maxFrame: maxFrame)
                    let peer = try PeerChannel(wrappingChannelSynchronously: channel)
                    Task { await self.adopt(peer) }
                }.recover { _ in
                    channel.close(promise: nil)  // half set up: nothing may read from it
                }
            }
            .bind(host: settings.listenAddress, port: settings.port).get()
    }

    static func addFraming(_ channel: Channel, maxFrame: Int) throws {
        let ops = channel.pipeline.syncOperations
        try ops.addHandler(ByteToMessageHandler(PeerFrameDecoder(maximumFrameBytes: maxFrame), maximumBufferSize: maxFrame + 4))
        try ops.addHandler(PeerFrameEncoder())
    }

    // MARK: - Our offer

    private func offerChanged(_ offered: OfferedActivity?) async {
        let offer = offered?.summary
        perform(book.offerChanged(offered))
        await keeping.ourOfferChanged(to: offer)
        if let offer, let history { history.note(offer, device: PeerDevice(id: identity.deviceID.description, name: deviceName), local: true) }
        // The first value is the offer at start, which the start's advertisement (a fresh
        // hint) covers already: a TXT update now would only add an announcement while the
        // service is still probing, when 32 workstations start together.
        defer { offerKnown = true }
        guard offerKnown, avahi != nil else { return }
        rotation.changed()
        guard hintTimer == nil else { return }
        hintTimer = timers.schedule(in: Self.hintDelay) {
            _ = Task { await self.publishHint() }
        }
    }

    /// The new hint is published a second after the offer changed, and so at most once a
    /// second. Linked peers have the offer already (it goes out on the links first); the
    /// hint is for the others. The TXT update is a blocking D-Bus call to avahi-daemon and
    /// an announcement every avahi-daemon on the network reads: made at once, it ran beside
    /// the offer's way to the peers, on the same CPUs. And mDNS sends a record at most once
    /// a second anyway (RFC 6762 §6.2), so an offer that changes faster (a title that
    /// follows playback) costs one update, not one each change.
    static let hintDelay: Duration = .seconds(1)

    private func publishHint() {
        hintTimer = nil
        publishAdvertisement()
    }

    private var offerKnown = false

    private func advertisement() -> ServiceAdvertisement {
        let pairingTag = pairing.advertisedTag.withLockedValue { $0 }
        return ServiceAdvertisement(name: rotation.name, port: UInt16(listenPort), txt: rotation.txt(pairing: pairingTag.map { ($0, deviceName) }),
                                    host: rotation.host, addresses: network.addresses.sorted())
    }

    /// A new advertisement, now and every rotation period (and when the key or this host's
    /// addresses change).
    func rotateAdvertisement() {
        let wait = rotation.rotate(at: clock.now())
        publishAdvertisement()
        rotationTimer?.cancel()
        rotationTimer = timers.schedule(in: .seconds(wait)) {
            _ = Task { await self.rotateAdvertisement() }
        }
    }

    /// Whether an advertisement's `t` was made with the account's key (current or previous).
    func isMember(advertising t: String?) -> Bool { rotation.isMember(advertising: t, at: clock.now()) }

    func publishAdvertisement() {
        avahi?.publish(advertisement())
    }

}
