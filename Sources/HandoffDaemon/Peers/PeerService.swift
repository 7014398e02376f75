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
    let group: EventLoopGroup
    let logger: Logger
    let avahi: AvahiDiscovery?
    let admission: PeerAdmissionGate
    let dialPolicy: DialPolicy
    /// Where offers eligible for search are remembered (nil: no history).
    let history: ActivityHistory?
    /// Apps' restoration state, some of which may go with a continued activity.
    let restoration: RestorationStore?
    var historyExpiry: RepeatedTask?

    var devices: [DeviceID: DeviceRecord] = [:]
    var services: [ServiceKey: ServiceRecord] = [:]
    var links: [DeviceID: PeerLink] = [:]
    var subscribers: [DeviceID: PeerLink] = [:]
    var currentOffer: ActivitySummary?
    var listenPort = 0
    var discovery: DiscoveryStatus = .unavailable("peer discovery is starting")
    var advertisedName: String?
    /// Connections the listener accepted, owned here until a task serves them (see
    /// `adopt`); false once the listener is closed and accepting has ended.
    var accepted: [PeerChannel] = []
    var accepting = true
    /// Which device each recently continued activity came from, for stream requests.
    var continuedFrom: [ActivityID: DeviceID] = [:]
    var continuedOrder: [ActivityID] = []
    /// Continued here lately, for the apps launched to continue them.
    var continued = ContinuedActivities()
    /// Open continuation streams per peer: (incoming, outgoing).
    var streamCounts: [DeviceID: (incoming: Int, outgoing: Int)] = [:]
    /// Pairing by code: the window, the attempt's connection, and whether the TLS
    /// verifier lets strangers in (read on NIO threads, hence the box).
    var pairing = PairingWindow()
    var pairingAttempt: PairingConnection?
    var pairingTimer: Scheduled<Void>?
    let pairingOpen = NIOLockedValueBox(false)
    /// Pair tags dialled in this window (one dial per tag), and addresses that failed.
    var pairingDialled: Set<String> = []
    var pairingUnreachable: Set<String> = []
    /// Pair tags of other workstations already announced (pairing-available).
    var pairingAnnounced: Set<String> = []
    /// The private advertisement: the shared key (current, previous), this rotation's
    /// random name, nonce and epoch, and the timer of the next rotation.
    var advertisementKeys: [AdvertisementKey] = []
    var rotationName = PrivateAdvertisement.randomHex(6)
    /// The SRV target's random host name, published with this host's addresses.
    var rotationHost = PrivateAdvertisement.randomHex(6)
    /// This host's addresses and routes, kept current by `NetworkWatch`.
    var network = NetworkWatch.snapshot()
    var rotationNonce = Array(AdvertisementKey.random(generation: 0).key.prefix(8))
    var rotationEpoch: Int64 = 0
    var rotationTimer: Scheduled<Void>?
    /// The account of devices (membership log), kept in `account.json`.
    var account: AccountLog
    let accountStore: AccountStore
    private let work: AsyncStream<Work>.Continuation
    private let workStream: AsyncStream<Work>
    /// Peer events for the control API, broadcast by one task in the order they happened. A
    /// task per event could deliver a link's `peer-disconnected` after the `peer-connected`
    /// of the link replacing it, and a client would then think the peer gone for good
    /// (bench-scale: "w14 lacks 1 after 60 s" while GET /v1/peers listed it).
    private let peerEvents: AsyncStream<ControlEvent>.Continuation
    private let peerEventStream: AsyncStream<ControlEvent>

    enum Work: Sendable {
        /// Serve the oldest connection in `accepted` (the channel is never in the stream:
        /// a stream drops what it holds when it ends).
        case serveAccepted
        case dial(ServiceKey, address: String, port: Int)
        case dialToPair(address: String, port: Int, tag: String?, given: String?)

    }

    public init(identity: DeviceIdentity, trust: TrustStore, accountStore: AccountStore, registry: ActivityRegistry, streams: StreamBroker, agent: SessionAgentBroker, deviceName: String,
                limits: ActivityLimits, settings: PeerServiceSettings, history: ActivityHistory? = nil, restoration: RestorationStore? = nil,
                group: EventLoopGroup, logger: Logger) throws {
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
        tls = try PeerTLS(identity: identity)
        avahi = settings.discovery ? AvahiDiscovery(browseDomains: settings.dnsSDDomains, logger: logger) : nil
        if !settings.discovery { discovery = .unavailable("discovery is turned off (--no-discovery)") }
        admission = PeerAdmissionGate(limits: settings.admissionLimits, logger: logger, timers: group.any())
        dialPolicy = DialPolicy(minimumBackoff: settings.minimumBackoff.nanoseconds, maximumBackoff: settings.maximumBackoff.nanoseconds,
                                maximumStaticBackoff: settings.maximumStaticBackoff.nanoseconds, untrustedRetry: settings.untrustedRetry.nanoseconds)
        self.accountStore = accountStore
        account = AccountLog(own: identity.deviceID, ownCertificate: identity.certificateDER)
        _ = account.merge(accountStore.load(logger: logger))
        advertisementKeys = accountStore.keys.load(logger: logger)
        if advertisementKeys.isEmpty {
            advertisementKeys = [AdvertisementKey.random(generation: 1)]
            do { try accountStore.keys.save(advertisementKeys) } catch {
                logger.error("could not save the advertisement key", metadata: ["error": "\(error)"])
            }
        }
        (workStream, work) = AsyncStream.makeStream(of: Work.self)
        (peerEventStream, peerEvents) = AsyncStream.makeStream(of: ControlEvent.self)
    }

    // MARK: - Running

    public func run() async throws {
        let server = try await bindListener()
        listenPort = server.localAddress?.port ?? 0
        logger.info("peer listener ready", metadata: ["port": "\(listenPort)", "device": "\(identity.deviceID)"])
        if let avahi {
            try avahi.start()
            rotateAdvertisement()
        }
        for peer in settings.staticPeers { addStaticPeer(peer) }
        if let history {
            await history.startRecording()
            // Searches never show what is past the retention; this frees the space. The
            // helper also does it whenever it starts, so not at start-up: that would start
            // it for nothing.
            historyExpiry = group.any().scheduleRepeatedTask(initialDelay: .hours(6), delay: .hours(6)) { _ in
                Task { await history.expire() }
            }
        }
        reconcileTrust()
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
    /// SIGILL: scripts/bench-scale, swift-nio#2637.)
    func adopt(_ channel: PeerChannel) async {
        guard accepting else {
            try? await channel.executeThenClose { _, _ in }  // stopping: close it properly
            return
        }
        accepted.append(channel)
        work.yield(.serveAccepted)
    }

    private func takeAccepted() -> PeerChannel? { accepted.isEmpty ? nil : accepted.removeFirst() }

    /// The listener is closed: what it accepted from now on is closed, not served.
    private func acceptingEnded() {
        accepting = false
        work.finish()
    }

    private func stop() async {
        rotationTimer?.cancel()
        historyExpiry?.cancel()
        await history?.stop()
        await streams.shutdown()
        await agent.shutdown()
        avahi?.stop()
        for link in links.values { link.close() }
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
        let pairingOpen = self.pairingOpen
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
                    let verify = PeerTLS.verifier(own: own, isTrusted: { trust.isTrusted($0) || pairingOpen.withLockedValue { $0 } }) { verdict in
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

    /// A TCP connection to a peer with TLS (pinned by `isTrusted`), the handshake deadline
    /// and framing: what every dial, link or stream, starts with.
    nonisolated func connectPeer(_ target: SocketAddress, on group: EventLoopGroup, isTrusted: @escaping @Sendable (DeviceID) -> Bool,
                                 configuration: PeerChannel.Configuration = .init(), tuneForBulk: Bool = false,
                                 note: @escaping @Sendable (PeerTLS.Verdict) -> Void = { _ in }) async throws -> PeerChannel {
        let tls = self.tls
        let maxFrame = settings.maximumFrameBytes
        let deadline = settings.handshakeTimeout + settings.helloTimeout
        let own = identity.deviceID
        return try await ClientBootstrap(group: group)
            .connectTimeout(settings.connectTimeout)
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelOption(PeerService.keepIdle, value: 10)
            .channelOption(PeerService.keepInterval, value: 5)
            .channelOption(PeerService.keepCount, value: 3)
            .connect(to: target) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let ops = channel.pipeline.syncOperations
                    try ops.addHandler(PreAuthenticationDeadline(deadline: deadline), name: PreAuthenticationDeadline.name)
                    let verify = PeerTLS.verifier(own: own, isTrusted: isTrusted, note: note)
                    try ops.addHandler(try NIOSSLClientHandler(context: tls.clientContext, serverHostname: nil, customVerificationCallback: verify))
                    try PeerService.addFraming(channel, maxFrame: maxFrame)
                    if tuneForBulk { StreamChannelTuning.apply(to: channel) }
                    return try PeerChannel(wrappingChannelSynchronously: channel, configuration: configuration)
                }
            }
    }

    static func addFraming(_ channel: Channel, maxFrame: Int) throws {
        let ops = channel.pipeline.syncOperations
        try ops.addHandler(ByteToMessageHandler(PeerFrameDecoder(maximumFrameBytes: maxFrame), maximumBufferSize: maxFrame + 4))
        try ops.addHandler(PeerFrameEncoder())
    }

    // MARK: - One connection

    /// Runs a connection from the hello to its end. `dialled` is the service we dialled,
    /// nil for one that came in.
    nonisolated func serve(_ channel: PeerChannel, dialled: ServiceKey?, purpose: PeerHello.Purpose = .link, pairingAddress: String? = nil,
                           pairingHost: String? = nil) async {
        let remote = channel.channel.remoteAddress?.ipAddress ?? "?"
        let ourPort = await listenPort
        let ourInstance = purpose == .link ? await advertisedInstance : nil
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(.hello(PeerHello(deviceName: deviceName, purpose: purpose, listenPort: UInt16(exactly: ourPort),
                                                          time: SystemClock.now(), instance: ourInstance)))
                var messages = inbound.makeAsyncIterator()
                guard let first = try await messages.next() else { return }
                // TLS has checked the certificate; which device it is decides the rest.
                guard let certificate = try await channel.channel.nioSSL_peerCertificate().get() else { return }
                let peerID = try DeviceIdentity.deviceID(of: certificate)
                let opening = PeerSession.opening(first: first, ours: purpose, dialled: dialled != nil, peerTrusted: trust.isTrusted(peerID))
                guard case .hello(let hello) = first else {
                    if case .refuse(let code, let message) = opening { try await outbound.write(.error(code: code, message: message)) }
                    return
                }
                switch opening {
                case .refuse(let code, let message):
                    try await outbound.write(.error(code: code, message: message))
                    return
                case .close:
                    return  // trust withdrawn meanwhile (or a stranger let in to pair)
                case .pair(let role):
                    // The address we dialled keeps an IPv6 link-local scope; the socket's does not.
                    await self.pair(with: peerID, name: hello.deviceName, address: pairingHost ?? remote, dialledAddress: pairingAddress,
                                    listenPort: hello.listenPort, certificate: try certificate.toDERBytes(), role: role,
                                    messages: &messages, outbound: outbound, channel: channel.channel)
                    return
                case .stream:
                    // Authenticated: the pre-authentication deadline and caps no longer apply.
                    try await channel.channel.pipeline.removeHandler(name: PreAuthenticationDeadline.name).get()
                    await serveStream(from: peerID, hello: hello, messages: &messages, outbound: outbound, channel: channel.channel)
                    return
                case .link(let tuned):
                    if tuned { PeerService.tuneForLink(channel.channel) }
                    try await channel.channel.pipeline.removeHandler(name: PreAuthenticationDeadline.name).get()
                }
                let (queue, queueIn) = AsyncStream.makeStream(of: PeerMessage.self, bufferingPolicy: .bufferingOldest(256))
                // The name the user gave at trust time wins over the one the peer calls itself.
                let link = PeerLink(deviceID: peerID, deviceName: trust.entry(peerID)?.name.nonEmpty ?? hello.deviceName,
                                    dialledBy: dialled == nil ? peerID : identity.deviceID, remoteAddress: remote,
                                    peerListenPort: hello.listenPort, channel: channel.channel, outbound: queueIn,
                                    clockSkewSeconds: hello.time.map { Double(SystemClock.now().nanoseconds(until: $0)) / 1e9 },
                                    instance: hello.instance)
                guard await attach(link, service: dialled) else { return }
                link.send(.subscribe)
                await linked(link, certificate: try certificate.toDERBytes())
                // One writer drains the link's queue; this task reads.
                async let writing: Void = PeerService.drain(queue, into: outbound)
                do {
                    while let message = try await messages.next() {
                        try await self.handle(message, from: link)
                    }
                } catch let e as PeerProtocolError {
                    // Say why before closing, so the other side's logs make sense.
                    try? await outbound.write(.error(code: e.code, message: e.message))
                    link.close()
                    try? await writing
                    throw e
                } catch {
                    link.close()
                    try? await writing
                    throw error
                }
                link.close()
                try? await writing
            }
        } catch {
            logger.debug("peer connection ended", metadata: ["remote": "\(remote)", "error": "\(error)"])
        }
        await detachAll(channel.channel)
    }

    private static func drain(_ queue: AsyncStream<PeerMessage>, into outbound: NIOAsyncChannelOutboundWriter<PeerMessage>) async throws {
        for await message in queue { try await outbound.write(message) }
    }

    private func handle(_ message: PeerMessage, from link: PeerLink) async throws {
        // A link replaced by a newer one may still deliver what it had buffered: ignore it.
        guard links[link.deviceID] === link else { return }
        switch PeerSession.step(for: message, fetchesInFlight: link.fetchesInFlight) {
        case .violation(let code, let message):
            throw PeerProtocolError(code: code, message: message)
        case .subscribe:
            subscribers[link.deviceID] = link
            link.send(.offer(currentOffer))
        case .recordOffer(let summary):
            devices[link.deviceID, default: DeviceRecord(id: link.deviceID, name: link.deviceName)].offer = summary
            await registry.broadcast(.peerOffer(link.device, summary))
            if let summary, let history { history.note(summary, device: link.device, local: false) }
        case .refuseFetch(let request, let code, let message):
            link.send(.fetched(requestID: request, .failure(code: code, message: message)))
        case .answerFetch(let request, let id):
            link.beginFetch()
            let (registry, restoration, limits) = (self.registry, self.restoration, self.limits)
            Task {
                defer { link.endFetch() }
                do {
                    var record = try await registry.snapshotForPeer(id)
                    // State the app marked to go with this activity, if it still fits the cap.
                    if let state = await restoration?.attachment(for: id) {
                        var with = record.activity
                        with.userInfo[PeerService.restorationKey] = state
                        if ActivityPropertyList.encodedSize(of: with) <= limits.maximumEncodedBytes { record.activity = with }
                    }
                    link.send(.fetched(requestID: request, .activity(record.activity, stale: record.stale ?? false)))
                } catch let e as HandoffError {
                    link.send(.fetched(requestID: request, PeerSession.fetchFailure(e)))
                } catch {
                    link.send(.fetched(requestID: request, .failure(code: "internal", message: "\(error)")))
                }
            }
        case .resolveFetch(let request, let result):
            link.resolve(request, result)
        case .noteContinued(let id):
            await registry.noteContinued(id, by: link.device)
        case .mergeAccount(let statements):
            await heardAccount(statements, from: link)
        case .considerKey(let generation, let key):
            heardAdvertisementKey(AdvertisementKey(generation: generation, key: key), from: link)
        case .peerClosing(let code, let message):
            logger.info("peer closed the connection with an error", metadata: ["peer": "\(link.deviceName)", "code": "\(code)", "message": "\(message)"])
            link.close()
        }
    }

    /// Registers a new link. With two connections to one peer, both sides keep the one
    /// dialled by the smaller device ID; returns false when `link` is the one to drop.
    private func attach(_ link: PeerLink, service: ServiceKey?) -> Bool {
        let replacing = links[link.deviceID] != nil
        if let existing = links[link.deviceID] {
            // Dialled from opposite ends at once: keep the one the smaller ID dialled. Dialled
            // from the same end: the new one replaces the old (its peer may have restarted
            // while our old socket still looks open).
            let keepNew = DialPolicy.keepsNewLink(existingDialledBy: existing.dialledBy, newDialledBy: link.dialledBy)
            if !keepNew { return false }
            existing.close()
            subscribers[link.deviceID] = nil
        }
        // Trust may have been withdrawn while this connection was saying hello.
        guard trust.isTrusted(link.deviceID) else { return false }
        links[link.deviceID] = link
        var record = devices[link.deviceID] ?? DeviceRecord(id: link.deviceID, name: link.deviceName)
        record.name = trust.entry(link.deviceID)?.name.nonEmpty ?? link.deviceName
        record.addresses.insert(link.remoteAddress)
        record.lastSeen = SystemClock.now()
        devices[link.deviceID] = record
        if let service {
            services[service]?.deviceID = link.deviceID
            services[service]?.failures = 0
        }
        // The instance it advertises is this device: linked, so not dialled as well.
        for (key, s) in services where s.deviceID == nil && link.advertises(key) { services[key]?.deviceID = link.deviceID }
        logger.info("peer connected", metadata: ["peer": "\(link.deviceName)", "id": "\(link.deviceID.shortID)", "address": "\(link.remoteAddress)"])
        updateWatches()
        if !replacing {  // a replaced duplicate is the same peer, still connected
            peerEvents.yield(.peerConnected(link.device))
        }
        return true
    }

    private func detachAll(_ channel: Channel) {
        guard let (id, link) = links.first(where: { $0.value.channel === channel }) else { return }
        links[id] = nil
        subscribers[id] = nil
        devices[id]?.lastSeen = SystemClock.now()
        let hadOffer = devices[id]?.offer != nil
        devices[id]?.offer = nil
        logger.info("peer disconnected", metadata: ["peer": "\(link.deviceName)"])
        if hadOffer { peerEvents.yield(.peerOffer(link.device, nil)) }
        peerEvents.yield(.peerDisconnected(link.device, reason: "connection closed"))
        // Still advertised? Then it may be back soon: try again (the side that yields gives
        // the other's dial its head start again).
        let now = SystemClock.now()
        for (key, s) in services where s.deviceID == id {
            services[key]?.heldBackSince = now
            scheduleRetry(key)
        }
        updateWatches()
    }

    // MARK: - Our offer

    private func offerChanged(_ offer: ActivitySummary?) {
        currentOffer = offer
        for link in subscribers.values { link.send(.offer(offer)) }
        if let offer, let history { history.note(offer, device: PeerDevice(id: identity.deviceID.description, name: deviceName), local: true) }
        // The first value is the offer at start, which the start's advertisement (a fresh
        // hint) covers already: a TXT update now would only add an announcement while the
        // service is still probing, when 32 workstations start together.
        defer { offerKnown = true }
        guard offerKnown else { return }
        // The change hint tells browsers something changed, not what.
        if let avahi { avahi.publish(advertisement(newHint: true)) }
    }

    private var offerKnown = false

    private var changeHint = PeerService.newHint()

    private static func newHint() -> String { String(ActivityID.random().rawValue.prefix(8)) }

    /// Nothing stable and nothing that names the device: a random name and nonce for this
    /// rotation, and a tag only the account's members can check (PeerProtocol.md §3.1).
    private func advertisement(newHint: Bool = false) -> ServiceAdvertisement {
        if newHint { changeHint = PeerService.newHint() }
        let key = advertisementKeys.first?.key ?? []
        var txt = [("v", "\(PeerHello.currentVersion)"), ("h", changeHint),
                   ("t", PrivateAdvertisement.txt(key: key, epoch: rotationEpoch, nonce: rotationNonce))]
        // While pairing: a random tag for this window, and the name the user will see.
        if let tag = pairing.tag, pairing.isOpen(at: SystemClock.now()) {
            txt.append(("pair", tag))
            txt.append(("n", AccountStatement.cut(deviceName, toBytes: 64)))
        }
        return ServiceAdvertisement(name: rotationName, port: UInt16(listenPort), txt: txt,
                                    host: rotationHost, addresses: network.addresses.sorted())
    }

    /// A new name, host name, nonce and hint, now and every rotation period (and when the key
    /// or this host's addresses change).
    func rotateAdvertisement() {
        let period = max(10, settings.advertisementRotationSeconds)
        let now = SystemClock.now()
        rotationName = PrivateAdvertisement.randomHex(6)
        rotationHost = PrivateAdvertisement.randomHex(6)
        rotationNonce = Array(AdvertisementKey.random(generation: 0).key.prefix(8))
        rotationEpoch = PrivateAdvertisement.epoch(at: now)
        changeHint = PeerService.newHint()
        publishAdvertisement()
        rotationTimer?.cancel()
        let next = (now.seconds / period + 1) * period
        let wait = max(1, next - now.seconds)
        rotationTimer = group.any().scheduleTask(in: .seconds(wait)) {
            _ = Task { await self.rotateAdvertisement() }
        }
    }

    /// Whether an advertisement's `t` was made with the account's key (current or previous).
    func isMember(advertising t: String?) -> Bool {
        guard let t else { return false }
        return PrivateAdvertisement.verifies(t, keys: advertisementKeys.map(\.key), epoch: PrivateAdvertisement.epoch(at: SystemClock.now()))
    }

    func publishAdvertisement() {
        avahi?.publish(advertisement())
    }

    // MARK: - Discovery and dialling

    private func discovered(_ event: AvahiEvent) {
        switch event {
        case .status(let s):
            discovery = s
            logger.info("discovery status", metadata: ["status": "\(s)"])
        case .published(let name):
            advertisedName = name
            logger.info("advertised", metadata: ["name": "\(name)", "port": "\(listenPort)"])
        case .found(let service):
            logger.debug("found", metadata: ["name": "\(service.key.name)", "address": "\(service.address)"])
            var record = services[service.key] ?? ServiceRecord(service: service)
            if services[service.key] == nil {
                record.heldBackSince = SystemClock.now()
                // Its device may have dialled us before we heard of it.
                record.deviceID = links.values.first { $0.advertises(service.key) }?.deviceID
            }
            // Unicast DNS-SD records are an administrator's, like a configured peer: no tag,
            // dialled whoever answers there (§3.4).
            if service.key.domain != "local" { record.isStatic = true }
            record.gone = false
            let changed = record.service.txt["h"] != service.txt["h"] || record.service.address != service.address
            record.service = service
            // mDNS says something changed, or announced a trusted peer we are not linked to
            // (its network came back): worth trying at once, whatever the backoff said.
            let lostPeer = record.deviceID.map { trust.isTrusted($0) && links[$0] == nil } ?? false
            if lostPeer || (changed && !(record.deviceID.map { !trust.isTrusted($0) } ?? false)) { record.notBefore = nil }
            // Found again, and both ends hear it at once: the hold back starts over.
            if lostPeer { record.heldBackSince = SystemClock.now() }
            services[service.key] = record
            considerDialling(service.key)
            considerPairing(service.key)
            updateWatch(service.key)
        case .removed(let key):
            services[key]?.watched = false  // Avahi forgot it too: a re-add starts unwatched
            if services[key]?.dialing == true { services[key]?.gone = true } else { services[key] = nil }
        }
    }

    func considerDialling(_ key: ServiceKey) {
        guard let record = services[key], !record.isSelf, !record.dialing, !record.gone else { return }
        let identity: DialPolicy.Identity = record.deviceID.map { trust.isTrusted($0) ? .trusted : .stranger }
            ?? .unknown(tagChecksOut: isMember(advertising: record.service.txt["t"]))
        let missing = trust.all.filter { links[$0.id] == nil }
        let members = Set(account.membership.members.map(\.id))
        let situation = DialPolicy.Situation(
            identity: identity, isStatic: record.isStatic, linked: record.deviceID.map { links[$0] != nil } ?? false,
            siblingBusy: services.values.contains { $0.instance == record.instance && ($0.dialing || ($0.deviceID.map { links[$0] != nil } ?? false)) },
            notBefore: record.notBefore, trustedMissing: !missing.isEmpty, nonMemberMissing: missing.contains { !members.contains($0.id) },
            yields: yields(to: key), heldBackSince: record.heldBackSince)
        let now = SystemClock.now()
        let decision = dialPolicy.decide(situation, at: now)
        var holdingBack = false
        if case .wait = decision, let end = dialPolicy.holdBackEnd(situation) { holdingBack = now < end }
        services[key]?.holdingBack = holdingBack
        switch decision {
        case .skip:
            return
        case .wait(let until):
            scheduleRetry(key, at: until)
        case .dial:
            logger.debug("dialling", metadata: ["name": "\(key.name)", "address": "\(record.service.address)"])
            services[key]?.dialing = true
            updateWatch(key)
            work.yield(.dial(key, address: record.service.address, port: Int(record.service.port)))
        }
    }

    /// Whether the instance is the one of the two to dial (PeerProtocol.md §10.4): found by
    /// mDNS while our advertisement is up, with a name that sorts first as UTF-8 bytes.
    private func yields(to key: ServiceKey) -> Bool {
        guard key.domain == "local", let ours = advertisedName else { return false }
        return key.name.utf8.lexicographicallyPrecedes(ours.utf8)
    }

    /// The instance name the hello of a link states: the advertised one (Avahi may have
    /// renamed it after a collision), or the one being registered after a rotation.
    var advertisedInstance: String {
        if let name = advertisedName, name.hasPrefix(rotationName) { return name }
        return rotationName
    }

    private func scheduleRetry(_ key: ServiceKey, at when: Timestamp? = nil) {
        guard var record = services[key], !record.retryScheduled, !record.isSelf, !record.gone else { return }
        if let id = record.deviceID, !trust.isTrusted(id) { return }  // untrusted: only mDNS or a trust change revives it
        let due = when ?? record.notBefore ?? SystemClock.now()
        let wait = max(0, SystemClock.now().nanoseconds(until: due))
        record.retryScheduled = true
        services[key] = record
        // An event-loop timer, not Task.sleep (which wakes libdispatch's monitor for ever).
        group.any().scheduleTask(in: .nanoseconds(wait)) {
            _ = Task { await self.retryDue(key) }
        }
    }

    private func retryDue(_ key: ServiceKey) {
        services[key]?.retryScheduled = false
        considerDialling(key)
        updateWatch(key)  // a hold back that ended may leave it undialled and worth watching
    }

    private func dial(_ key: ServiceKey, address: String, port: Int) async {
        let verdict = NIOLockedValueBox<PeerTLS.Verdict?>(nil)
        var connected = false
        var failure: String?
        do {
            let target = try await PeerService.resolve(address, port: port)
            let channel = try await connectPeer(target, on: group, isTrusted: trust.isTrusted) { v in verdict.withLockedValue { $0 = v } }
            connected = true
            await serve(channel, dialled: key)
        } catch {
            logger.debug("dial failed", metadata: ["address": "\(address)", "port": "\(port)", "error": "\(error)"])
            failure = PeerService.describeDialFailure(error)
        }
        services[key]?.lastError = failure
        if failure != nil { services[key]?.lastErrorAt = SystemClock.now() }
        dialFinished(key, verdict: verdict.withLockedValue { $0 }, connected: connected)
    }

    private func dialFinished(_ key: ServiceKey, verdict: PeerTLS.Verdict?, connected: Bool) {
        guard var record = services[key] else { return }
        record.dialing = false
        if record.gone {
            services[key] = nil
            for (other, s) in services where s.instance == record.instance { considerDialling(other) }
            return
        }
        let now = SystemClock.now()
        switch verdict {
        case .ourselves:
            record.isSelf = true
            record.notBefore = dialPolicy.nextTry(after: .ourselves, isStatic: record.isStatic, at: now)
        case .untrusted(let id):
            record.deviceID = id
            record.notBefore = dialPolicy.nextTry(after: .stranger, isStatic: record.isStatic, at: now)
            noteUntrusted(id, address: record.service.address, name: nil)
        case .trusted(let id):
            record.deviceID = id
            fallthrough
        case .unreadable, nil:
            record.failures += 1
            record.notBefore = dialPolicy.nextTry(after: .failed(failures: record.failures), isStatic: record.isStatic, at: now)
        }
        services[key] = record
        _ = connected
        updateWatch(key)
        if !record.isSelf { scheduleRetry(key) }
        // Another address of the same instance may be waiting for this dial to end.
        for (other, s) in services where other != key && s.instance == record.instance { considerDialling(other) }
    }

    /// A peer at a configured address: dialled like one found by mDNS, and never forgotten.
    func addStaticPeer(_ text: String, domain: String = "static") {
        guard let (host, port) = try? Self.hostAndPort(text) else {
            logger.warning("ignored a peer address", metadata: ["peer": "\(text)"])
            return
        }
        let key = ServiceKey(interfaceIndex: -1, ipv6: host.contains(":"), name: "\(host):\(port)", domain: domain)
        guard services[key] == nil else { return }
        var record = ServiceRecord(service: DiscoveredService(key: key, hostName: host, address: host, port: UInt16(port), txt: [:]))
        record.isStatic = true
        services[key] = record
        logger.info("static peer", metadata: ["address": "\(host)", "port": "\(port)"])
        considerDialling(key)
    }

    /// A numeric address as it is; a host name through the resolver (off the event loop).
    static func resolve(_ host: String, port: Int) async throws -> SocketAddress {
        if let address = try? SocketAddress(ipAddress: host, port: port) { return address }
        return try await NIOThreadPool.singleton.runIfActive { try SocketAddress.makeAddressResolvingHost(host, port: port) }
    }

    func noteUntrusted(_ id: DeviceID, address: String, name: String?) {
        // Strangers can show any number of certificates: remember only the latest few.
        let strangers = devices.values.filter { !trust.isTrusted($0.id) && links[$0.id] == nil }
        if devices[id] == nil, strangers.count >= PeerService.rememberedStrangers,
           let oldest = strangers.min(by: { ($0.lastSeen ?? Timestamp(seconds: 0)) < ($1.lastSeen ?? Timestamp(seconds: 0)) }) {
            devices[oldest.id] = nil
        }
        var record = devices[id] ?? DeviceRecord(id: id, name: name ?? "")
        if let name, record.name.isEmpty { record.name = name }
        record.addresses.insert(address)
        record.lastSeen = SystemClock.now()
        devices[id] = record
    }
}

extension PeerService {
    static let rememberedStrangers = 64
    /// A link carries small messages: notice its death within about 9 s (3 s idle, then 3
    /// probes 2 s apart; unacknowledged data is given up on after 9 s too). Stream
    /// connections keep the looser settings every connection starts with, so a reader
    /// that is only slow (a zero window, probes answered) is never cut.
    static let userTimeout = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: 18))  // TCP_USER_TIMEOUT

    static func tuneForLink(_ channel: Channel) {
        _ = channel.setOption(keepIdle, value: 3)
        _ = channel.setOption(keepInterval, value: 2)
        _ = channel.setOption(keepCount, value: 3)
        _ = channel.setOption(userTimeout, value: 9000)
    }
    // A peer that vanished (power cut, network change) is noticed in about 25 s instead of
    // Linux's default two hours, so its stale link cannot shut out its return.
    static let keepIdle = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPIDLE))
    static let keepInterval = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPINTVL))
    static let keepCount = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPCNT))
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
