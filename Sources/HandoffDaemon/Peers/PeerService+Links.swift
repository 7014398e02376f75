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

/// One connection with a peer: its hello, its messages, and the link it becomes.
extension PeerService {
    // MARK: - One connection

    /// Runs a connection from the hello to its end. `dialled` is the service we dialled,
    /// nil for one that came in. Returns why it ended before it began its purpose (the
    /// link, the stream or the pairing exchange), nil once it did.
    @discardableResult
    nonisolated func serve(_ channel: PeerChannel, dialled: ServiceKey?, purpose: PeerHello.Purpose = .link, pairingAddress: String? = nil,
                           pairingHost: String? = nil) async -> EarlyEnd? {
        let remote = channel.channel.remoteAddress?.ipAddress ?? "?"
        let ourPort = await listenPort
        let ourInstance = purpose == .link ? await advertisedInstance : nil
        var attached: PeerLink?
        var early: EarlyEnd? = .closedBeforeHello
        // One that came in is counted (`inboundPending`) until it said hello or ended.
        var pendingFrom = dialled == nil ? channel.channel.remoteAddress?.ipAddress : nil
        do {
            try await channel.executeThenClose { inbound, outbound in
                // Held from the start: a peer that answers our hello and closes at once (a
                // refusal, its reason in an error message) tears the pipeline down before its
                // messages are read; the handler, and the certificate it holds, outlive that.
                let eventLoop = channel.channel.eventLoop
                let tls = try await channel.channel.pipeline.handler(type: NIOSSLHandler.self).map { NIOLoopBound($0, eventLoop: eventLoop) }.get()
                try await outbound.write(.hello(PeerHello(deviceName: deviceName, purpose: purpose, listenPort: UInt16(exactly: ourPort),
                                                          time: clock.now(), instance: ourInstance)))
                var messages = inbound.makeAsyncIterator()
                guard let first = try await messages.next() else { return }
                // TLS has checked the certificate; which device it is decides the rest.
                guard let certificate = try await eventLoop.submit({ tls.value.peerCertificate }).get() else { return }
                let peerID = try DeviceIdentity.deviceID(of: certificate)
                let opening = PeerSession.opening(first: first, ours: purpose, dialled: dialled != nil, peerTrusted: trust.isTrusted(peerID))
                guard case .hello(let hello) = first else {
                    if case .error(_, let message) = first { early = .refused(message) }
                    if case .refuse(let code, let message) = opening { try await outbound.write(.error(code: code, message: message)) }
                    return
                }
                switch opening {
                case .refuse(let code, let message):
                    early = .incompatible(message)
                    try await outbound.write(.error(code: code, message: message))
                    return
                case .close:
                    return  // trust withdrawn meanwhile (or a stranger let in to pair)
                case .pair(let role):
                    early = nil
                    if let from = pendingFrom { pendingFrom = nil; await inboundSettled(from: from) }
                    // The address we dialled keeps an IPv6 link-local scope; the socket's does not.
                    await pairing.exchange(with: peerID, name: hello.deviceName, address: pairingHost ?? remote, dialledAddress: pairingAddress,
                                    listenPort: hello.listenPort, certificate: try certificate.toDERBytes(), role: role,
                                    messages: &messages, outbound: outbound, channel: channel.channel)
                    return
                case .stream:
                    early = nil
                    if let from = pendingFrom { pendingFrom = nil; await inboundSettled(from: from) }
                    // Authenticated: the pre-authentication deadline and caps no longer apply.
                    try await channel.channel.pipeline.removeHandler(name: PreAuthenticationDeadline.name).get()
                    await peerStreams.serveStream(from: peerID, hello: hello, messages: &messages, outbound: outbound, channel: channel.channel)
                    return
                case .link(let tuned):
                    early = nil
                    if tuned { PeerService.tuneForLink(channel.channel) }
                    try await channel.channel.pipeline.removeHandler(name: PreAuthenticationDeadline.name).get()
                }
                let (queue, queueIn) = AsyncStream.makeStream(of: PeerMessage.self, bufferingPolicy: .bufferingOldest(256))
                // The name the user gave at trust time wins over the one the peer calls itself.
                let link = PeerLink(deviceID: peerID, deviceName: trust.entry(peerID)?.name.nonEmpty ?? hello.deviceName,
                                    dialledBy: dialled == nil ? peerID : identity.deviceID, remoteAddress: remote,
                                    peerListenPort: hello.listenPort, channel: channel.channel, outbound: queueIn, timers: timers.bound(to: channel.channel.eventLoop),
                                    clockSkewSeconds: hello.time.map { Double(clock.now().nanoseconds(until: $0)) / 1e9 },
                                    instance: hello.instance, version: hello.version)
                guard await attach(link, service: dialled) else { return }
                attached = link
                await linked(link, certificate: try certificate.toDERBytes())
                if let from = pendingFrom { pendingFrom = nil; await inboundSettled(from: from) }
                // One writer drains the link's queue; this task reads.
                async let writing: Void = PeerService.drain(queue, into: outbound, for: link)
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
            // A reason the peer gave stands, even if answering it then failed.
            if early == .closedBeforeHello { early = .failed(DialFailure(error)) }
        }
        if let from = pendingFrom { await inboundSettled(from: from) }
        if let attached { await detach(attached) }
        return early
    }

    /// How a connection ended before it began its purpose.
    enum EarlyEnd: Error, Equatable, Sendable {
        case closedBeforeHello
        /// The peer's first message was an error: its reason.
        case refused(String)
        /// Our versions have none in common.
        case incompatible(String)
        case failed(DialFailure)
    }

    static func drain(_ queue: AsyncStream<PeerMessage>, into outbound: NIOAsyncChannelOutboundWriter<PeerMessage>, for link: PeerLink) async throws {
        for await message in queue { try await outbound.write(message) }
        link.sent()
    }

    func handle(_ message: PeerMessage, from link: PeerLink) async throws {
        // A link replaced by a newer one may still deliver what it had buffered: ignore it.
        guard book.isCurrent(link) else { return }
        switch PeerSession.step(for: message, fetchesInFlight: link.fetchesInFlight, version: link.version) {
        case .violation(let code, let message):
            throw PeerProtocolError(code: code, message: message)
        case .subscribe:
            perform(book.subscribe(link))
            await clipboard.subscribed(link)
        case .recordOffer(let summary):
            perform(book.received(summary, from: link))
            if let summary, let history { history.note(summary, device: link.device, local: false) }
        case .refuseFetch(let request, let code, let message):
            link.send(.fetched(requestID: request, .failure(code: code, message: message)))
        case .answerFetch(let request, let id):
            link.beginFetch()
            let (registry, restoration, limits) = (self.registry, self.restoration, self.limits)
            Task {
                defer { link.endFetch() }
                do {
                    var record = try await registry.snapshotForPeer(id, for: link.deviceID)
                    if let restoration { record.activity = await restoration.attached(to: record.activity, limits: limits) }
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
            await perform(await accounts.heard(statements, from: link))
        case .considerKey(let generation, let key):
            heardAdvertisementKey(AdvertisementKey(generation: generation, key: key), from: link)
        case .compareKept(let entries):
            await keeping.compare(entries, from: link)
        case .takeKept(let items):
            let account = self.account
            try await keeping.take(items, from: link) { account.memberKey($0) }
        case .recordClipboard(let offer):
            await clipboard.heard(offer, from: link)
        case .forgetHistory(let ids):
            forgetHistory(of: link, ids)
        case .peerClosing(let code, let message):
            logger.info("peer closed the connection with an error", metadata: ["peer": "\(link.deviceName)", "code": "\(code)", "message": "\(message)"])
            link.close()
        }
    }

    /// Registers a new link (`PeerBook.attach`); false when `link` is the one to drop.
    func attach(_ link: PeerLink, service: ServiceKey?) async -> Bool {
        guard !asleep else { return false }  // about to sleep: see `sleep(_:session:)`
        // Trust may have been withdrawn while this connection was saying hello.
        let trusted = trust.isTrusted(link.deviceID)
        guard let actions = book.attach(link, trusted: trusted, trustedName: trust.entry(link.deviceID)?.name.nonEmpty, at: clock.now()) else { return false }
        dialBook.linked(link.deviceID, dialled: service, advertises: link.advertises)
        logger.info("peer connected", metadata: ["peer": "\(link.deviceName)", "id": "\(link.deviceID.shortID)", "address": "\(link.remoteAddress)"])
        perform(actions)
        updateWatches()
        await clipboard.linkUp(link)
        await peerStreams.linkUp(link)
        return true
    }

    /// The link's connection ended: its offer goes, and its instance may be dialled again.
    func detach(_ link: PeerLink) async {
        let actions = book.detach(link, at: clock.now())
        guard !actions.isEmpty else { return }  // replaced by a newer link
        logger.info("peer disconnected", metadata: ["peer": "\(link.deviceName)"])
        perform(actions)
        await clipboard.linkDown(link)
        await accounts.linkDown(link)
        await peerStreams.linkDown(link)
        // What a member keeps for it stands in for its live offer now.
        await keeping.linkDown(link)
        perform(dialBook.unlinked(link.deviceID, wasAt: Self.lastLinkService(link), dialFacts, at: clock.now()))
        updateWatches()
    }

    /// Where the link reached its peer, as a dial target: its address on the link (a
    /// link-local IPv6 address with its interface, as mDNS results have it) and the port
    /// from its hello.
    static func lastLinkService(_ link: PeerLink) -> DiscoveredService? {
        guard let address = link.streamAddress, let port = address.port, let ip = address.ipAddress else { return nil }
        var host = ip
        if case .v6(let a) = address, ip.lowercased().hasPrefix("fe80:") {
            guard a.address.sin6_scope_id != 0 else { return nil }
            host += "%\(a.address.sin6_scope_id)"
        }
        let key = ServiceKey(interfaceIndex: -1, ipv6: host.contains(":"), name: "\(host):\(port)", domain: "link")
        return DiscoveredService(key: key, hostName: host, address: host, port: UInt16(port), txt: [:])
    }

    /// Does what the peer book decided.
    func perform(_ actions: [PeerBook<PeerLink>.Action]) {
        for action in actions {
            switch action {
            case .close(let link): link.close()
            case .send(let link, let message): link.send(message)
            case .emit(let event): peerEvents.yield(event)
            }
        }
    }
}
