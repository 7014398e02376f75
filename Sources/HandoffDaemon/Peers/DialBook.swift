import HandoffAvahi
import HandoffCore

/// The instances this workstation knows of (found by mDNS or unicast DNS-SD, or
/// configured) and what dialling each has taught: whom to dial now, whom later, whose TXT
/// changes to keep watching. A value: every event returns the actions `PeerService`
/// performs (dial, set a timer, open or close a resolver); the time and what the rest of
/// the peer side knows (`DialFacts`) come with each call, so it is tested without sockets,
/// Avahi or waiting. The decisions themselves are `DialPolicy`'s.
struct DialBook {
    private(set) var services: [ServiceKey: ServiceRecord] = [:]
    let policy: DialPolicy

    init(policy: DialPolicy) { self.policy = policy }

    enum Action: Equatable, Sendable {
        /// Connect to it now (the record says it is being dialled).
        case dial(ServiceKey, address: String, port: Int)
        /// Call `retryDue` after this many nanoseconds.
        case retry(ServiceKey, afterNanoseconds: Int64)
        /// Keep Avahi reporting its TXT changes, or stop.
        case watch(ServiceKey, Bool)
        /// Its certificate is a stranger's: remember the device (for pairing and doctor).
        case noteStranger(DeviceID, address: String)
    }

    subscript(key: ServiceKey) -> ServiceRecord? { services[key] }

    // MARK: - Events

    /// mDNS (or unicast DNS-SD) reported the instance, new or changed. `linkedAs`: the
    /// device whose link advertises it, if one dialled us before we heard of it.
    mutating func found(_ service: DiscoveredService, linkedAs: DeviceID?, _ facts: DialFacts, at now: Timestamp) -> [Action] {
        var record = services[service.key] ?? ServiceRecord(service: service)
        if services[service.key] == nil {
            record.heldBackSince = now
            record.deviceID = linkedAs
        }
        // Unicast DNS-SD records are an administrator's, like a configured peer: no tag,
        // dialled whoever answers there (§3.4).
        if service.key.domain != "local" { record.isStatic = true }
        record.gone = false
        let changed = record.service.txt["h"] != service.txt["h"] || record.service.address != service.address
        record.service = service
        // mDNS says something changed, or announced a trusted peer we are not linked to
        // (its network came back): worth trying at once, whatever the backoff said.
        let lostPeer = record.deviceID.map { facts.isTrusted($0) && !facts.isLinked($0) } ?? false
        if lostPeer || (changed && !(record.deviceID.map { !facts.isTrusted($0) } ?? false)) { record.notBefore = nil }
        // Found again, and both ends hear it at once: the hold back starts over.
        if lostPeer { record.heldBackSince = now }
        services[service.key] = record
        return consider(service.key, facts, at: now) + watch(service.key, facts)
    }

    /// mDNS withdrew it. Kept while a dial runs, so a quick re-add finds its state.
    mutating func removed(_ key: ServiceKey) {
        services[key]?.watched = false  // Avahi forgot it too: a re-add starts unwatched
        if services[key]?.dialing == true { services[key]?.gone = true } else { services[key] = nil }
    }

    /// A configured address (or where a peer was when we paired): dialled like one found
    /// by mDNS, and never forgotten. Nothing if it is known already.
    mutating func addStatic(_ service: DiscoveredService, _ facts: DialFacts, at now: Timestamp) -> [Action]? {
        guard services[service.key] == nil else { return nil }
        var record = ServiceRecord(service: service)
        record.isStatic = true
        services[service.key] = record
        return consider(service.key, facts, at: now)
    }

    /// Whether to dial it, now or later (`DialPolicy.decide`).
    mutating func consider(_ key: ServiceKey, _ facts: DialFacts, at now: Timestamp) -> [Action] {
        guard let record = services[key], !record.isSelf, !record.dialing, !record.gone else { return [] }
        if record.isLastLink, let device = record.deviceID {
            if let until = record.lastLinkUntil, now >= until {
                services[key] = nil
                return []
            }
            // mDNS has an instance that is, or may be, the device: that one is dialled (or
            // waited for); look again later, in case it goes.
            if mayBeFound(device, facts) {
                return retry(key, at: now.adding(nanoseconds: policy.maximumBackoff), facts, now: now)
            }
        }
        let identity: DialPolicy.Identity = record.deviceID.map { facts.isTrusted($0) ? .trusted : .stranger }
            ?? .unknown(tagChecksOut: facts.isMember(record.service.txt["t"]))
        let situation = DialPolicy.Situation(
            identity: identity, isStatic: record.isStatic, linked: record.deviceID.map(facts.isLinked) ?? false,
            siblingBusy: services.values.contains { $0.instance == record.instance && ($0.dialing || ($0.deviceID.map(facts.isLinked) ?? false)) },
            notBefore: record.notBefore, trustedMissing: facts.trustedMissing, nonMemberMissing: facts.nonMemberMissing,
            yields: record.isLastLink ? lastLinkYields(record, facts) : yields(to: key, advertisedName: facts.advertisedName),
            heldBackSince: record.heldBackSince, inboundPending: facts.inboundPending(record.service.address))
        let decision = policy.decide(situation, at: now)
        var holdingBack = false
        if case .wait = decision, let end = policy.holdBackEnd(situation) { holdingBack = now < end }
        services[key]?.holdingBack = holdingBack
        switch decision {
        case .skip:
            return []
        case .wait(let until):
            return retry(key, at: until, facts, now: now)
        case .dial:
            services[key]?.dialing = true
            return watch(key, facts) + [.dial(key, address: record.service.address, port: Int(record.service.port))]
        }
    }

    /// The timer `retry` asked for has fired.
    mutating func retryDue(_ key: ServiceKey, _ facts: DialFacts, at now: Timestamp) -> [Action] {
        services[key]?.retryScheduled = false
        // A hold back that ended may leave it undialled and worth watching.
        return consider(key, facts, at: now) + watch(key, facts)
    }

    /// A dial ended: what its certificate said (nil: none seen), and why it gave no link.
    mutating func dialFinished(_ key: ServiceKey, verdict: PeerTLS.Verdict?, failure: DialFailure?, _ facts: DialFacts, at now: Timestamp) -> [Action] {
        guard var record = services[key] else { return [] }
        record.lastError = failure
        if failure != nil { record.lastErrorAt = now }
        record.dialing = false
        if record.gone {
            services[key] = nil
            return siblings(of: record.instance, except: nil).flatMap { consider($0, facts, at: now) }
        }
        var actions: [Action] = []
        switch verdict {
        case .ourselves:
            record.isSelf = true
            record.notBefore = policy.nextTry(after: .ourselves, isStatic: record.isStatic, at: now)
        case .untrusted(let id):
            record.deviceID = id
            record.notBefore = policy.nextTry(after: .stranger, isStatic: record.isStatic, at: now)
            actions.append(.noteStranger(id, address: record.service.address))
        case .trusted(let id):
            record.deviceID = id
            fallthrough
        case .unreadable, nil:
            record.failures += 1
            // No announcement revives a last link's address either: back off as for a static one.
            record.notBefore = policy.nextTry(after: .failed(failures: record.failures), isStatic: record.isStatic || record.isLastLink, at: now)
        }
        services[key] = record
        actions += watch(key, facts)
        if !record.isSelf { actions += retry(key, at: nil, facts, now: now) }
        // Another address of the same instance may be waiting for this dial to end.
        for other in siblings(of: record.instance, except: key) { actions += consider(other, facts, at: now) }
        return actions
    }

    /// A link to `device` is up; `dialled`, the instance dialled for it, if any.
    /// `advertises`: whether that link's hello named an instance.
    mutating func linked(_ device: DeviceID, dialled: ServiceKey?, advertises: (ServiceKey) -> Bool) {
        if let dialled {
            services[dialled]?.deviceID = device
            services[dialled]?.failures = 0
        }
        // Linked again: where the last link was matters no more (the next one will say).
        forgetLastLinks(of: device, except: nil)
        // The instance it advertises is this device: linked, so not dialled as well.
        for (key, s) in services where s.deviceID == nil && advertises(key) { services[key]?.deviceID = device }
    }

    /// The link to `device` ended. Still advertised? Then it may be back soon: try again
    /// (the side that yields gives the other's dial its head start again). `wasAt`: where
    /// the link reached it (its address and the port from its hello), dialled while mDNS
    /// knows no instance that may be it. mDNS alone can leave a peer undialled: its random
    /// name changes while it is linked (the first time right after pairing), and if the new
    /// name's resolve fails here (a lost packet, a busy avahi-daemon), nothing would dial it.
    mutating func unlinked(_ device: DeviceID, wasAt: DiscoveredService? = nil, _ facts: DialFacts, at now: Timestamp) -> [Action] {
        var actions: [Action] = []
        if let wasAt, facts.isTrusted(device) {
            forgetLastLinks(of: device, except: wasAt.key)
            var record = services[wasAt.key] ?? ServiceRecord(service: wasAt)
            record.service = wasAt
            record.deviceID = device
            record.isLastLink = true
            record.gone = false
            record.lastLinkUntil = now.adding(nanoseconds: policy.lastLinkLifetime)
            services[wasAt.key] = record
        }
        for (key, s) in services where s.deviceID == device {
            services[key]?.heldBackSince = now
            actions += retry(key, at: nil, facts, now: now)
        }
        return actions
    }

    /// A device became trusted: throttles are forgotten (what was refused as untrusted may
    /// now be welcome) and what is advertised is dialled.
    mutating func trusted(_ device: DeviceID, _ facts: DialFacts, at now: Timestamp) -> [Action] {
        for key in services.keys {
            services[key]?.notBefore = nil
            if services[key]?.deviceID == device || services[key]?.deviceID == nil { services[key]?.failures = 0 }
        }
        return services.keys.sorted(by: Self.order).flatMap { consider($0, facts, at: now) }
    }

    /// A connection that came in from `address` said hello or ended: an instance there held
    /// back for it (`DialPolicy.Situation.inboundPending`) is decided again now, not when
    /// the hold back ends (a link it became makes it linked; a failure, worth a dial).
    mutating func inboundSettled(from address: String, _ facts: DialFacts, at now: Timestamp) -> [Action] {
        let host = DialFacts.host(address)
        return services.filter { DialFacts.host($0.value.service.address) == host && $0.value.holdingBack }
            .keys.sorted(by: Self.order).flatMap { consider($0, facts, at: now) + watch($0, facts) }
    }

    /// The network changed: every peer that is not linked is worth dialling at once,
    /// whatever its backoff said; the path that failed may be there now.
    mutating func networkChanged(_ facts: DialFacts, at now: Timestamp) -> [Action] {
        for key in services.keys {
            services[key]?.notBefore = nil
            services[key]?.failures = 0
        }
        return services.keys.sorted(by: Self.order).flatMap { consider($0, facts, at: now) }
    }

    /// After a link came or went: whose changes matter may have changed for every instance.
    mutating func watchAll(_ facts: DialFacts) -> [Action] {
        services.keys.sorted(by: Self.order).flatMap { watch($0, facts) }
    }

    // MARK: - Internals

    /// Whether the instance is the one of the two to dial (PeerProtocol.md §10.4): found by
    /// mDNS while our advertisement is up, with a name that sorts first as UTF-8 bytes.
    func yields(to key: ServiceKey, advertisedName: String?) -> Bool {
        guard key.domain == "local", let ours = advertisedName else { return false }
        return key.name.utf8.lexicographicallyPrecedes(ours.utf8)
    }

    /// Drops where earlier links to `device` were (one being dialled goes when its dial ends).
    private mutating func forgetLastLinks(of device: DeviceID, except kept: ServiceKey?) {
        for (key, s) in services where s.isLastLink && s.deviceID == device && key != kept {
            if s.dialing { services[key]?.gone = true } else { services[key] = nil }
        }
    }

    /// Whether an instance mDNS found is, or may be, `device`: identified as it, or not
    /// identified yet with a tag that checks out (a member, so perhaps it under a new name).
    /// Not our own: its tag checks out too, and it may never have been dialled to learn it
    /// is ours (found while every trusted device was linked); its name is the one we
    /// advertise.
    private func mayBeFound(_ device: DeviceID, _ facts: DialFacts) -> Bool {
        services.values.contains { s in
            !s.isLastLink && !s.gone && !s.isSelf && !(s.service.key.domain == "local" && s.service.key.name == facts.advertisedName)
                && (s.deviceID == device || (s.deviceID == nil && facts.isMember(s.service.txt["t"])))
        }
    }

    /// Without the peer's instance name there is no name to compare, so the device IDs
    /// decide who yields: the larger, as the link the smaller one dials is the one both keep
    /// (`DialPolicy.keepsNewLink`).
    private func lastLinkYields(_ record: ServiceRecord, _ facts: DialFacts) -> Bool {
        guard let own = facts.ownDeviceID, let device = record.deviceID else { return false }
        return device < own
    }

    private func siblings(of instance: String, except key: ServiceKey?) -> [ServiceKey] {
        services.filter { $0.key != key && $0.value.instance == instance }.keys.sorted(by: Self.order)
    }

    /// One timer at a time per instance; none for ourselves, for what is gone, or for a
    /// device known to be untrusted (only mDNS or a trust change revives it).
    private mutating func retry(_ key: ServiceKey, at when: Timestamp?, _ facts: DialFacts, now: Timestamp) -> [Action] {
        guard var record = services[key], !record.retryScheduled, !record.isSelf, !record.gone else { return [] }
        if let id = record.deviceID, !facts.isTrusted(id) { return [] }
        let due = when ?? record.notBefore ?? now
        record.retryScheduled = true
        services[key] = record
        return [.retry(key, afterNanoseconds: max(0, now.nanoseconds(until: due)))]
    }

    /// Which instances Avahi keeps resolving. A resolver left open reports TXT changes, but it
    /// also keeps avahi-daemon querying the network for the instance's records, and every
    /// avahi-daemon on the link reads those queries: with 32 workstations starting together
    /// the open resolvers took the avahi-daemons most of two cores for half a minute
    /// (bench-scale, Performance.md "Scale"). So a resolver closes at its first answer, and an
    /// instance is watched only while a change of its TXT could still matter (PeerProtocol.md
    /// §3.2): a new hint says to dial a device that is not linked, and waits for its backoff, at
    /// once; and a pairing tag may appear on a stranger's.
    private mutating func watch(_ key: ServiceKey, _ facts: DialFacts) -> [Action] {
        guard facts.canWatch, let record = services[key] else { return [] }
        let wanted = Self.wantsChanges(record, facts)
        guard wanted != record.watched else { return [] }
        services[key]?.watched = wanted
        return [.watch(key, wanted)]
    }

    static func wantsChanges(_ record: ServiceRecord, _ facts: DialFacts) -> Bool {
        // Being dialled: the handshake will tell more than any TXT could.
        if record.isSelf || record.dialing { return false }
        // Not an mDNS result: nothing for Avahi to resolve.
        if record.isLastLink { return false }
        // Held back for its own dial (DialPolicy.yields): that link will tell more, and soon;
        // a resolver open meanwhile made the avahi-daemons query all through a mass start
        // (24 workstations: about twice their CPU, and the links 0.6 s later).
        if record.holdingBack { return false }
        if let id = record.deviceID { return !facts.isLinked(id) }
        // Not identified yet. One whose tag checks out is a member of the account: with
        // every trusted device linked it is one of them, and nothing it says matters.
        return !(facts.everyTrustedLinked && facts.isMember(record.service.txt["t"]))
    }

    /// A fixed order, so that the actions of one event come out the same every time.
    private static func order(_ a: ServiceKey, _ b: ServiceKey) -> Bool {
        (a.domain, a.name, a.interfaceIndex, a.ipv6 ? 1 : 0) < (b.domain, b.name, b.interfaceIndex, b.ipv6 ? 1 : 0)
    }
}

/// What the rest of the peer side knows, as the dial book asks it at an event.
struct DialFacts {
    var isTrusted: (DeviceID) -> Bool
    var isLinked: (DeviceID) -> Bool
    /// Whether an advertisement's tag (`t`) checks out with the account's key.
    var isMember: (String?) -> Bool
    /// Some trusted device is not linked.
    var trustedMissing: Bool
    /// Some device trusted by ID alone (not in the account) is not linked.
    var nonMemberMissing: Bool
    var everyTrustedLinked: Bool
    /// Our own advertisement's instance name, once Avahi has published it.
    var advertisedName: String?
    /// Avahi runs and the daemon is not stopping: resolvers may be opened.
    var canWatch: Bool
    /// This workstation's device ID (who yields at a last link's address).
    var ownDeviceID: DeviceID? = nil
    /// Whether a connection from this address (an mDNS result's, maybe with an IPv6 scope)
    /// came in and has not said hello yet.
    var inboundPending: (String) -> Bool = { _ in false }

    /// An address as a connection's remote end shows it: without an IPv6 scope (`%2`), and
    /// an IPv4 address as itself rather than IPv4-mapped.
    static func host(_ address: String) -> Substring {
        var host = address[...]
        if let percent = host.firstIndex(of: "%") { host = host[..<percent] }
        if host.lowercased().hasPrefix("::ffff:"), host.contains(".") { host = host.dropFirst(7) }
        return host
    }
}
