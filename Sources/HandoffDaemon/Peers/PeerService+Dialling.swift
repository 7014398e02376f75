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

/// What mDNS and static addresses say is out there, and when to dial it (`DialPolicy`).
extension PeerService {
    // MARK: - Discovery and dialling

    func discovered(_ event: AvahiEvent) {
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
                record.heldBackSince = clock.now()
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
            if lostPeer { record.heldBackSince = clock.now() }
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
        let now = clock.now()
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
    func yields(to key: ServiceKey) -> Bool {
        guard key.domain == "local", let ours = advertisedName else { return false }
        return key.name.utf8.lexicographicallyPrecedes(ours.utf8)
    }

    /// The instance name the hello of a link states: the advertised one (Avahi may have
    /// renamed it after a collision), or the one being registered after a rotation.
    var advertisedInstance: String {
        if let name = advertisedName, name.hasPrefix(rotationName) { return name }
        return rotationName
    }

    func scheduleRetry(_ key: ServiceKey, at when: Timestamp? = nil) {
        guard var record = services[key], !record.retryScheduled, !record.isSelf, !record.gone else { return }
        if let id = record.deviceID, !trust.isTrusted(id) { return }  // untrusted: only mDNS or a trust change revives it
        let due = when ?? record.notBefore ?? clock.now()
        let wait = max(0, clock.now().nanoseconds(until: due))
        record.retryScheduled = true
        services[key] = record
        // An event-loop timer, not Task.sleep (which wakes libdispatch's monitor for ever).
        group.any().scheduleTask(in: .nanoseconds(wait)) {
            _ = Task { await self.retryDue(key) }
        }
    }

    func retryDue(_ key: ServiceKey) {
        services[key]?.retryScheduled = false
        considerDialling(key)
        updateWatch(key)  // a hold back that ended may leave it undialled and worth watching
    }

    func dial(_ key: ServiceKey, address: String, port: Int) async {
        let verdict = NIOLockedValueBox<PeerTLS.Verdict?>(nil)
        var connected = false
        var failure: DialFailure?
        do {
            let target = try await PeerService.resolve(address, port: port)
            let channel = try await connectPeer(target, on: group, isTrusted: trust.isTrusted) { v in verdict.withLockedValue { $0 = v } }
            connected = true
            await serve(channel, dialled: key)
        } catch {
            logger.debug("dial failed", metadata: ["address": "\(address)", "port": "\(port)", "error": "\(error)"])
            failure = DialFailure(error)
        }
        services[key]?.lastError = failure
        if failure != nil { services[key]?.lastErrorAt = clock.now() }
        dialFinished(key, verdict: verdict.withLockedValue { $0 }, connected: connected)
    }

    func dialFinished(_ key: ServiceKey, verdict: PeerTLS.Verdict?, connected: Bool) {
        guard var record = services[key] else { return }
        record.dialing = false
        if record.gone {
            services[key] = nil
            for (other, s) in services where s.instance == record.instance { considerDialling(other) }
            return
        }
        let now = clock.now()
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
        record.lastSeen = clock.now()
        devices[id] = record
    }
}
