import Crypto
import HandoffControlAPI
import HandoffCore
import HandoffPeerProtocol
import HandoffStreamFrames
import Logging
import ServiceLifecycle

/// Offers kept for members that sleep (Docs/PeerProtocol.md §18). A link of version 2
/// starts with each side's index (per origin, the sequence held); each side then sends
/// what the other lacks. What a member sends that is new is passed on to the other
/// members linked now, so it spreads like the account's statements. The decisions are
/// `KeptOffers`'; this service performs them: the links, the state file, the events of
/// kept offers that stand in for a sleeping origin's, and the one timer of the next expiry.
/// It hears of links from the link layer (`LinkListener`), once the account went first.
actor KeepingService: Service, LinkListener, CustomStringConvertible {
    nonisolated var description: String { "kept offers" }
    private let identity: DeviceIdentity
    private let registry: ActivityRegistry
    private let restoration: RestorationStore?
    private let trust: TrustStore
    private let limits: ActivityLimits
    /// What a peer's kept offer may weigh at most when read (the frame bounds it anyway).
    private let maximumFrameBytes: Int
    private let store: KeptOfferStore
    private let events: AsyncStream<ControlEvent>.Continuation
    private let clock: any WallClock
    private let timers: any Timers
    private let logger: Logger
    private var kept: KeptOffers
    private var expiryTimer: ScheduledTimer?
    private var links = LinkedPeers()
    /// Links whose index was answered: one per link, so a peer cannot make this one send
    /// everything again and again.
    private var indexAnswered: Set<ObjectIdentifier> = []
    /// Names of devices met on links, for an origin the user gave no name.
    private var names: [DeviceID: String] = [:]
    private var stopped = false

    init(identity: DeviceIdentity, registry: ActivityRegistry, restoration: RestorationStore?, trust: TrustStore, limits: ActivityLimits,
         maximumFrameBytes: Int, store: KeptOfferStore, events: AsyncStream<ControlEvent>.Continuation, clock: any WallClock, timers: any Timers,
         logger: Logger) {
        self.identity = identity
        self.registry = registry
        self.restoration = restoration
        self.trust = trust
        self.limits = limits
        self.maximumFrameBytes = maximumFrameBytes
        self.store = store
        self.events = events
        self.clock = clock
        self.timers = timers
        self.logger = logger
        kept = KeptOffers(own: identity.deviceID)
    }

    /// Nothing runs until asked; at the daemon's stop the expiry timer goes.
    func run() async throws {
        try? await gracefulShutdown()
        stop()
    }

    func stop() {
        stopped = true
        expiryTimer?.cancel()
        expiryTimer = nil
    }

    /// At start: what was kept, checked again against the account as it is now.
    func load(memberKey: @Sendable (DeviceID) -> P256.Signing.PublicKey?) {
        let contents = store.load(maximumPayload: limits.maximumEncodedBytes, logger: logger)
        let now = clock.now()
        for item in contents.items {
            if item.origin == identity.deviceID {
                if item.verifies(with: identity.signingKey.publicKey) { kept.issue(item) }
            } else if case .refused(let why) = kept.take(item, originKey: memberKey(item.origin), at: now) {
                logger.warning("dropped a kept offer read from disk", metadata: ["origin": "\(item.origin.shortID)", "why": "\(why)"])
            }
        }
        kept.noteIssued(contents.issued)
        kept.noteFloors(contents.floors)
        scheduleExpiry()
    }

    // MARK: - Links

    /// A link came up (after the account's statements): tell it what we hold, so it sends
    /// only what is newer.
    func linkUp(_ link: any LinkEnd) {
        links.up(link)
        indexAnswered.remove(ObjectIdentifier(link))
        names[link.deviceID] = link.deviceName
        guard link.version >= 2 else { return }
        var entries = kept.index.sorted { $0.key < $1.key }.map { PeerMessage.KeptIndexEntry(origin: $0.key.bytes, sequence: $0.value) }[...]
        repeat {
            link.send(.keptIndex(Array(entries.prefix(PeerMessage.maximumKeptItems))))
            entries = entries.dropFirst(PeerMessage.maximumKeptItems)
        } while !entries.isEmpty
    }

    /// The link ended: what this workstation keeps for its device stands in for its live
    /// offer now.
    func linkDown(_ link: any LinkEnd) {
        indexAnswered.remove(ObjectIdentifier(link))
        guard links.down(link) else { return }
        if let k = offers(except: Set(links.byDevice.keys)).first(where: { $0.item.origin == link.deviceID }) {
            events.yield(.peerOffer(k.device, ActivitySummary(k.activity, payloadSize: k.item.payload.count)))
        }
    }

    /// The peer's index: send what it lacks. One index per link is answered (a device holds
    /// at most 64 origins, well inside one message): another is ignored.
    func compare(_ entries: [PeerMessage.KeptIndexEntry], from link: any LinkEnd) {
        guard indexAnswered.insert(ObjectIdentifier(link)).inserted else { return }
        var theirs: [DeviceID: UInt64] = [:]
        for e in entries { theirs[DeviceID(bytes: e.origin)] = e.sequence }
        // It holds something of ours numbered above our count (our state file was lost,
        // and the clock set back): number from there on.
        if let ours = theirs[identity.deviceID], ours > kept.issued {
            kept.noteIssued(ours)
            save()
        }
        send(kept.newer(than: theirs, for: link.deviceID, at: clock.now()), to: link)
    }

    /// In messages that stay well inside a frame: a payload is at most the activity cap.
    private func send(_ items: [KeptOffer], to link: any LinkEnd) {
        guard link.version >= 2 else { return }
        var batch: [[UInt8]] = [], size = 0
        for item in items {
            let bytes = item.encoded
            if !batch.isEmpty, batch.count == PeerMessage.maximumKeptItems || size + bytes.count > limits.maximumEncodedBytes {
                link.send(.kept(batch))
                (batch, size) = ([], 0)
            }
            batch.append(bytes)
            size += bytes.count
        }
        if !batch.isEmpty { link.send(.kept(batch)) }
    }

    /// Items from a member. One that is not what a member would send (unreadable, over the
    /// cap, unsigned or signed by someone else, not meant for us, a second item under one
    /// sequence) refuses the whole message: nothing it sent is kept, and the link closes.
    func take(_ blobs: [[UInt8]], from link: any LinkEnd, memberKey: @Sendable (DeviceID) -> P256.Signing.PublicKey?) throws(PeerProtocolError) {
        var items: [KeptOffer] = []
        for blob in blobs {
            // Bounded by the frame; over this device's own activity cap (members may set
            // theirs higher) it is not kept, and that is no fault of the sender's.
            do { items.append(try KeptOffer(decoding: blob, maximumPayload: maximumFrameBytes)) } catch {
                logger.warning("refused a kept offer", metadata: ["peer": "\(link.deviceName)", "why": "\(error.description)"])
                throw PeerProtocolError(code: "bad-kept-offer", message: error.description)
            }
        }
        let oversize = items.filter { $0.payload.count > limits.maximumEncodedBytes }
        if !oversize.isEmpty {
            logger.info("not keeping offers over this workstation's activity cap", metadata: ["peer": "\(link.deviceName)", "count": "\(oversize.count)"])
            items.removeAll { $0.payload.count > limits.maximumEncodedBytes }
        }
        let issuedBefore = kept.issued
        let heldBefore = Set(kept.byOrigin.keys)
        let taken: [KeptOffer]
        switch kept.take(all: items, originKey: memberKey, at: clock.now()) {
        case .success(let t):
            taken = t
        case .failure(let refused):
            logger.warning("refused a kept offer", metadata: ["peer": "\(link.deviceName)", "origin": "\(refused.origin.shortID)", "why": "\(refused.reason)"])
            throw PeerProtocolError(code: "bad-kept-offer", message: refused.reason)
        }
        if taken.isEmpty {
            if kept.issued != issuedBefore { save() }
            return
        }
        save()
        scheduleExpiry()
        let linked = Set(links.byDevice.keys)
        // Taking these may have pushed out others' (the caps): they are gone here.
        for origin in heldBefore.subtracting(kept.byOrigin.keys) where !linked.contains(origin) {
            events.yield(.peerOffer(device(origin), nil))
        }
        for item in taken {
            logger.info("keeping an offer for a member", metadata: ["origin": "\(item.origin.shortID)", "kind": "\(item.kind)", "from": "\(link.deviceName)"])
            // Passed on to every other member linked now that may hold it.
            for other in links.all where other !== link && other.deviceID != item.origin && item.isFor(other.deviceID) {
                send([item], to: other)
            }
            // A linked origin's live offer is the one apps see; a kept one only stands in for it.
            guard !linked.contains(item.origin) else { continue }
            switch item.kind {
            case .offer:
                if let a = try? item.activity() { events.yield(.peerOffer(device(item.origin), ActivitySummary(a, payloadSize: item.payload.count))) }
            case .withdrawn:
                events.yield(.peerOffer(device(item.origin), nil))
            }
        }
    }

    // MARK: - What this workstation issues

    /// Our offer as it stands, signed, with a payload as fresh as its owner can make it,
    /// to every member linked now (before sleep). False when nothing is offered.
    @discardableResult
    func pushOwnOffer() async -> Bool {
        // The registry's, not what the offer stream has brought the link layer yet (it may lag).
        guard let offer = await registry.lastOffer else { return false }
        var record: ActivityRecord
        do { record = try await registry.snapshotForPeer(offer.id) } catch {
            logger.info("nothing to keep: the offer could not be saved", metadata: ["error": "\(error.message)"])
            return false
        }
        // As a fetch would have it.
        if let restoration { record.activity = await restoration.attached(to: record.activity, limits: limits) }
        let now = clock.now()
        do {
            let item = try KeptOffer.offer(record.activity, stale: record.stale ?? false, targets: offer.targets, sequence: kept.nextSequence(at: now),
                                           origin: identity.deviceID, at: now, key: identity.signingKey)
            issue(item)
        } catch {
            logger.error("could not sign the offer to keep", metadata: ["error": "\(error)"])
            return false
        }
        return true
    }

    /// Of `linked`, the members our handed-out offer is for (and that keep offers at all).
    func handedTo(_ linked: [any LinkEnd]) -> Int {
        guard let mine = kept.mine, mine.kind == .offer else { return 0 }
        return linked.filter { $0.version >= 2 && mine.isFor($0.deviceID) }.count
    }

    /// Our offer changed: what members keep of an earlier one is withdrawn.
    func ourOfferChanged(to current: ActivitySummary?) {
        guard let mine = kept.mine, mine.kind == .offer, mine.activityID != current?.id else { return }
        let now = clock.now()
        do {
            issue(try KeptOffer.withdrawal(of: mine.activityID, targets: mine.targets, sequence: kept.nextSequence(at: now),
                                           origin: identity.deviceID, at: now, key: identity.signingKey))
        } catch {
            logger.error("could not sign the withdrawal of a kept offer", metadata: ["error": "\(error)"])
        }
    }

    /// Awake again: what was handed out before sleep is not what is offered from now on
    /// (the live offer counts while linked, and a later absence is not sleep).
    func withdrawHandedOffer() {
        if kept.mine?.kind == .offer { ourOfferChanged(to: nil) }
    }

    private func issue(_ item: KeptOffer) {
        kept.issue(item)
        save()
        scheduleExpiry()
        for link in links.all where item.isFor(link.deviceID) { send([item], to: link) }
    }

    // MARK: - Forgetting

    /// `handoffctl forget`: what is kept for these origins (nil: all). How many were forgotten.
    func forget(_ origins: [DeviceID]?) -> Int {
        var n = 0
        for origin in origins ?? Array(kept.byOrigin.keys) where kept.forget(origin) {
            n += 1
            if links[origin] == nil { events.yield(.peerOffer(device(origin), nil)) }
        }
        if n > 0 {
            logger.info("forgot kept offers", metadata: ["workstations": "\(n)"])
            save()
            scheduleExpiry()
        }
        return n
    }

    /// A device left the account: what it offered goes too.
    func left(_ origin: DeviceID) {
        guard kept.forget(origin) else { return }
        logger.info("dropped what was kept for a device no longer in the account", metadata: ["origin": "\(origin.shortID)"])
        save()
        events.yield(.peerOffer(device(origin), nil))
    }

    // MARK: - What is kept

    /// Kept offers of origins not in `linked` (a linked origin's live offer counts instead).
    func offers(except linked: Set<DeviceID>) -> [(device: PeerDevice, item: KeptOffer, activity: Activity)] {
        kept.offers(at: clock.now(), except: linked).compactMap { item in
            guard item.isFor(identity.deviceID), let a = try? item.activity() else { return nil }
            return (device(item.origin), item, a)
        }
    }

    /// The origin as the user named it.
    func device(_ id: DeviceID) -> PeerDevice {
        PeerDevice(id: id.description, name: trust.entry(id)?.name.nonEmpty ?? names[id] ?? "")
    }

    private func save() {
        store.save(.init(items: kept.all, issued: kept.issued, floors: kept.floors))
    }

    /// Wakes up when the next kept item is due to go, and only then.
    private func scheduleExpiry() {
        expiryTimer?.cancel()
        expiryTimer = nil
        guard !stopped, let due = kept.nextExpiry else { return }
        // At most two days ahead (`KeptOffers.issuedAheadTolerance`); clamped all the same.
        let wait = min(max(0, clock.now().nanoseconds(until: due)), 3 * 86_400 * 1_000_000_000) + 1_000_000
        expiryTimer = timers.schedule(in: .nanoseconds(wait)) {
            _ = Task { await self.expiryDue() }
        }
    }

    private func expiryDue() {
        let gone = kept.expire(at: clock.now())
        save()
        let linked = Set(links.byDevice.keys)
        for origin in gone where !linked.contains(origin) { events.yield(.peerOffer(device(origin), nil)) }
        scheduleExpiry()
    }
}
