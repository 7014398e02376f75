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

    func discovered(_ event: AvahiEvent) async {
        switch event {
        case .status(let s):
            discovery = s
            logger.info("discovery status", metadata: ["status": "\(s)"])
        case .published(let name):
            advertisedName = name
            logger.info("advertised", metadata: ["name": "\(name)", "port": "\(listenPort)"])
        case .found(let service):
            logger.debug("found", metadata: ["name": "\(service.key.name)", "address": "\(service.address)"])
            // Its device may have dialled us before we heard of it.
            let linkedAs = dialBook[service.key] == nil ? links.values.first { $0.advertises(service.key) }?.deviceID : nil
            perform(dialBook.found(service, linkedAs: linkedAs, dialFacts, at: clock.now()))
            let candidates = pairingCandidates([service.key])
            if !candidates.isEmpty { await pairing.consider(candidates) }
        case .removed(let key):
            dialBook.removed(key)
        }
    }

    /// What the dial book needs to know of links, trust and the account, now.
    var dialFacts: DialFacts {
        let (trustStore, linked) = (trust, links)
        let missing = trustStore.all.filter { linked[$0.id] == nil }
        let members = Set(account.membership.members.map(\.id))
        let (keys, epoch) = (rotation.keys.map(\.key), PrivateAdvertisement.epoch(at: clock.now()))
        let pending = inboundPending
        return DialFacts(
            isTrusted: { trustStore.isTrusted($0) }, isLinked: { linked[$0] != nil },
            isMember: { t in t.map { PrivateAdvertisement.verifies($0, keys: keys, epoch: epoch) } ?? false },
            trustedMissing: !missing.isEmpty, nonMemberMissing: missing.contains { !members.contains($0.id) },
            everyTrustedLinked: missing.isEmpty, advertisedName: advertisedName, canWatch: avahi != nil && accepting,
            ownDeviceID: identity.deviceID, inboundPending: { pending[DialFacts.host($0)] != nil })
    }

    /// A connection counted in `inboundPending` said hello (and became what it came for)
    /// or ended: an instance at its address that waited for it is decided again.
    func inboundSettled(from address: String) {
        let host = DialFacts.host(address)
        guard let count = inboundPending[host] else { return }
        inboundPending[host] = count > 1 ? count - 1 : nil
        perform(dialBook.inboundSettled(from: address, dialFacts, at: clock.now()))
    }

    /// Does what the dial book decided.
    func perform(_ actions: [DialBook.Action]) {
        for action in actions {
            switch action {
            case .dial(let key, let address, let port):
                logger.debug("dialling", metadata: ["name": "\(key.name)", "address": "\(address)"])
                work.yield(.dial(key, address: address, port: port))
            case .retry(let key, let wait):
                _ = timers.schedule(in: .nanoseconds(wait)) {
                    _ = Task { await self.retryDue(key) }
                }
            case .watch(let key, let wanted):
                avahi?.watchChanges(of: key, wanted)
            case .noteStranger(let id, let address):
                noteUntrusted(id, address: address, name: nil)
            }
        }
    }

    /// The instance name the hello of a link states: the advertised one (Avahi may have
    /// renamed it after a collision), or the one being registered after a rotation.
    var advertisedInstance: String { rotation.instance(advertised: advertisedName) }

    /// After a link came or went: whose changes matter may have changed for every instance.
    func updateWatches() { perform(dialBook.watchAll(dialFacts)) }

    func retryDue(_ key: ServiceKey) { perform(dialBook.retryDue(key, dialFacts, at: clock.now())) }

    func dial(_ key: ServiceKey, address: String, port: Int) async {
        let verdict = NIOLockedValueBox<PeerTLS.Verdict?>(nil)
        var failure: DialFailure?
        // About to sleep: no new link (the wake-up dials everyone at once).
        if asleep {
            perform(dialBook.dialFinished(key, verdict: nil, failure: .other("this workstation is going to sleep"), dialFacts, at: clock.now()))
            return
        }
        do {
            let target = try await PeerService.resolve(address, port: port)
            let channel = try await dialer.connect(target, on: group, isTrusted: trust.isTrusted) { v in verdict.withLockedValue { $0 = v } }
            await serve(channel, dialled: key)
        } catch {
            logger.debug("dial failed", metadata: ["address": "\(address)", "port": "\(port)", "error": "\(error)"])
            failure = DialFailure(error)
        }
        perform(dialBook.dialFinished(key, verdict: verdict.withLockedValue { $0 }, failure: failure, dialFacts, at: clock.now()))
    }

    /// A peer at a configured address: dialled like one found by mDNS, and never forgotten.
    func addStaticPeer(_ text: String, domain: String = "static") {
        guard let (host, port) = try? Self.hostAndPort(text) else {
            logger.warning("ignored a peer address", metadata: ["peer": "\(text)"])
            return
        }
        let key = ServiceKey(interfaceIndex: -1, ipv6: host.contains(":"), name: "\(host):\(port)", domain: domain)
        let service = DiscoveredService(key: key, hostName: host, address: host, port: UInt16(port), txt: [:])
        guard let actions = dialBook.addStatic(service, dialFacts, at: clock.now()) else { return }
        logger.info("static peer", metadata: ["address": "\(host)", "port": "\(port)"])
        perform(actions)
    }

    /// A numeric address as it is; a host name through the resolver (off the event loop).
    static func resolve(_ host: String, port: Int) async throws -> SocketAddress {
        if let address = try? SocketAddress(ipAddress: host, port: port) { return address }
        return try await NIOThreadPool.singleton.runIfActive { try SocketAddress.makeAddressResolvingHost(host, port: port) }
    }

    func noteUntrusted(_ id: DeviceID, address: String, name: String?) {
        book.sawStranger(id, name: name, address: address, isTrusted: trust.isTrusted, at: clock.now())
    }
}
