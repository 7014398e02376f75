import HandoffCore
import HandoffControlAPI
import HandoffPeerProtocol
import HandoffStreamFrames
import NIOConcurrencyHelpers
import NIOCore

/// Offers kept for members that sleep (Docs/PeerProtocol.md §18). A link of version 2
/// starts with each side's index (per origin, the sequence held); each side then sends
/// what the other lacks. What a member sends that is new is passed on to the other
/// members linked now, so it spreads like the account's statements. The decisions are
/// `KeptOffers`'; this is the I/O.
extension PeerService {
    /// A link came up: tell it what we hold, so it sends only what is newer.
    func sendKeptIndex(to link: PeerLink) {
        guard link.version >= 2 else { return }
        var entries = kept.index.sorted { $0.key < $1.key }.map { PeerMessage.KeptIndexEntry(origin: $0.key.bytes, sequence: $0.value) }[...]
        repeat {
            link.send(.keptIndex(Array(entries.prefix(PeerMessage.maximumKeptItems))))
            entries = entries.dropFirst(PeerMessage.maximumKeptItems)
        } while !entries.isEmpty
    }

    /// The peer's index: send what it lacks. One index per link is answered (a device holds
    /// at most 64 origins, well inside one message): another is ignored, so a peer cannot
    /// make this one send everything again and again.
    func compareKept(_ entries: [PeerMessage.KeptIndexEntry], from link: PeerLink) {
        guard link.firstKeptIndex() else { return }
        var theirs: [DeviceID: UInt64] = [:]
        for e in entries { theirs[DeviceID(bytes: e.origin)] = e.sequence }
        // It holds something of ours numbered above our count (our state file was lost,
        // and the clock set back): number from there on.
        if let ours = theirs[identity.deviceID], ours > kept.issued {
            kept.noteIssued(ours)
            saveKept()
        }
        sendKept(kept.newer(than: theirs, for: link.deviceID, at: clock.now()), to: link)
    }

    /// In messages that stay well inside a frame: a payload is at most the activity cap.
    func sendKept(_ items: [KeptOffer], to link: PeerLink) {
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
    func takeKept(_ blobs: [[UInt8]], from link: PeerLink) throws(PeerProtocolError) {
        var items: [KeptOffer] = []
        for blob in blobs {
            // Bounded by the frame; over this device's own activity cap (members may set
            // theirs higher) it is not kept, and that is no fault of the sender's.
            do { items.append(try KeptOffer(decoding: blob, maximumPayload: settings.maximumFrameBytes)) } catch {
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
        switch kept.take(all: items, originKey: account.memberKey, at: clock.now()) {
        case .success(let t):
            taken = t
        case .failure(let refused):
            logger.warning("refused a kept offer", metadata: ["peer": "\(link.deviceName)", "origin": "\(refused.origin.shortID)", "why": "\(refused.reason)"])
            throw PeerProtocolError(code: "bad-kept-offer", message: refused.reason)
        }
        if taken.isEmpty {
            if kept.issued != issuedBefore { saveKept() }
            return
        }
        saveKept()
        scheduleKeptExpiry()
        let linked = Set(links.keys)
        // Taking these may have pushed out others' (the caps): they are gone here.
        for origin in heldBefore.subtracting(kept.byOrigin.keys) where !linked.contains(origin) {
            peerEvents.yield(.peerOffer(keptDevice(origin), nil))
        }
        for item in taken {
            logger.info("keeping an offer for a member", metadata: ["origin": "\(item.origin.shortID)", "kind": "\(item.kind)", "from": "\(link.deviceName)"])
            // Passed on to every other member linked now that may hold it.
            for other in links.values where other !== link && other.deviceID != item.origin && item.isFor(other.deviceID) {
                sendKept([item], to: other)
            }
            // A linked origin's live offer is the one apps see; a kept one only stands in for it.
            guard !linked.contains(item.origin) else { continue }
            let device = keptDevice(item.origin)
            switch item.kind {
            case .offer:
                if let a = try? item.activity() { peerEvents.yield(.peerOffer(device, ActivitySummary(a, payloadSize: item.payload.count))) }
            case .withdrawn:
                peerEvents.yield(.peerOffer(device, nil))
            }
        }
    }

    /// Our offer as it stands, signed, with a payload as fresh as its owner can make it,
    /// to every member linked now (before sleep). False when nothing is offered.
    @discardableResult
    func pushOwnOffer() async -> Bool {
        // The registry's, not what the offer stream has brought here yet (it may lag).
        guard let offer = await registry.lastOffer else { return false }
        var record: ActivityRecord
        do { record = try await registry.snapshotForPeer(offer.id) } catch {
            logger.info("nothing to keep: the offer could not be saved", metadata: ["error": "\(error.message)"])
            return false
        }
        // As a fetch would have it: with the state the app marked to go along, if it fits.
        if let state = await restoration?.attachment(for: offer.id) {
            var with = record.activity
            with.userInfo[PeerService.restorationKey] = state
            if ActivityPropertyList.encodedSize(of: with) <= limits.maximumEncodedBytes { record.activity = with }
        }
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

    /// Our offer changed: what members keep of an earlier one is withdrawn.
    func withdrawKeptOffer(unless current: ActivitySummary?) {
        guard let mine = kept.mine, mine.kind == .offer, mine.activityID != current?.id else { return }
        let now = clock.now()
        do {
            issue(try KeptOffer.withdrawal(of: mine.activityID, targets: mine.targets, sequence: kept.nextSequence(at: now),
                                           origin: identity.deviceID, at: now, key: identity.signingKey))
        } catch {
            logger.error("could not sign the withdrawal of a kept offer", metadata: ["error": "\(error)"])
        }
    }

    private func issue(_ item: KeptOffer) {
        kept.issue(item)
        saveKept()
        scheduleKeptExpiry()
        for link in links.values where item.isFor(link.deviceID) { sendKept([item], to: link) }
    }

    /// `handoffctl forget`: what is kept for one workstation (name or device ID), or for all.
    func forgetKept(device text: String?) throws(HandoffError) -> KeptForgotten {
        var origins = Array(kept.byOrigin.keys)
        if let text {
            origins = try targets([text])
        }
        var n = 0
        for origin in origins where kept.forget(origin) {
            n += 1
            if links[origin] == nil { peerEvents.yield(.peerOffer(keptDevice(origin), nil)) }
        }
        if n > 0 {
            logger.info("forgot kept offers", metadata: ["workstations": "\(n)"])
            saveKept()
            scheduleKeptExpiry()
        }
        return KeptForgotten(forgotten: n)
    }

    /// A device left the account: what it offered goes too.
    func forgetKept(_ origin: DeviceID) {
        guard kept.forget(origin) else { return }
        logger.info("dropped what was kept for a device no longer in the account", metadata: ["origin": "\(origin.shortID)"])
        saveKept()
        peerEvents.yield(.peerOffer(keptDevice(origin), nil))
    }

    /// Kept offers of origins not linked now (a linked origin's live offer counts instead).
    func keptOffers(at now: Timestamp) -> [(device: PeerDevice, item: KeptOffer, activity: Activity)] {
        kept.offers(at: now, except: Set(links.keys)).compactMap { item in
            guard item.isFor(identity.deviceID), let a = try? item.activity() else { return nil }
            return (keptDevice(item.origin), item, a)
        }
    }

    /// The origin as the user named it.
    func keptDevice(_ id: DeviceID) -> PeerDevice {
        PeerDevice(id: id.description, name: trust.entry(id)?.name.nonEmpty ?? devices[id]?.name ?? "")
    }

    func saveKept() {
        keptStore.save(.init(items: kept.all, issued: kept.issued, floors: kept.floors))
    }

    /// Wakes up when the next kept item is due to go, and only then.
    func scheduleKeptExpiry() {
        keptExpiryTimer?.cancel()
        keptExpiryTimer = nil
        guard let due = kept.nextExpiry else { return }
        // At most two days ahead (`KeptOffers.issuedAheadTolerance`); clamped all the same.
        let wait = min(max(0, clock.now().nanoseconds(until: due)), 3 * 86_400 * 1_000_000_000) + 1_000_000
        keptExpiryTimer = timers.schedule(in: .nanoseconds(wait)) {
            _ = Task { await self.keptExpiryDue() }
        }
    }

    private func keptExpiryDue() {
        let gone = kept.expire(at: clock.now())
        saveKept()
        let linked = Set(links.keys)
        for origin in gone where !linked.contains(origin) { peerEvents.yield(.peerOffer(keptDevice(origin), nil)) }
        scheduleKeptExpiry()
    }

    /// At start: what was kept, checked again against the account as it is now.
    func loadKept() {
        let contents = keptStore.load(maximumPayload: limits.maximumEncodedBytes, logger: logger)
        let now = clock.now()
        for item in contents.items {
            if item.origin == identity.deviceID {
                if item.verifies(with: identity.signingKey.publicKey) { kept.issue(item) }
            } else if case .refused(let why) = kept.take(item, originKey: account.memberKey(item.origin), at: now) {
                logger.warning("dropped a kept offer read from disk", metadata: ["origin": "\(item.origin.shortID)", "why": "\(why)"])
            }
        }
        kept.noteIssued(contents.issued)
        kept.noteFloors(contents.floors)
        scheduleKeptExpiry()
    }
}

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
            let offered = await pushOwnOffer()
            // The agent gave up waiting, the machine slept and woke, and said so meanwhile.
            guard asleep, sleepEpoch == epoch else { return SleepAnswer(phase: .prepare, offered: offered, handedTo: 0) }
            let handedTo = offered ? links.values.filter { link in link.version >= 2 && kept.mine.map { $0.isFor(link.deviceID) } ?? false }.count : 0
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
            wake(reason: "woke up")
            return SleepAnswer(phase: .resume)
        }
    }

    /// After sleep (or a sleep that did not happen): link again at once, whatever the backoff said.
    func wake(reason: String) {
        asleepTimer?.cancel()
        asleepTimer = nil
        sleepEpoch &+= 1
        let was = asleep
        asleep = false
        // What was handed out before sleep is not what is offered from now on: the live
        // offer counts while linked, and a later absence is not sleep.
        if kept.mine?.kind == .offer { withdrawKeptOffer(unless: nil) }
        logger.info("\(reason): linking again", metadata: ["was asleep": "\(was)"])
        perform(dialBook.networkChanged(dialFacts, at: clock.now()))
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
