import HandoffAvahi
import HandoffCore
import HandoffControlAPI
import HandoffPeerProtocol
import NIOCore
import NIOPosix

/// What the control API asks of the peer side: who is around, what they offer, trust,
/// and continuing an activity from another workstation.
extension PeerService {
    /// Where restoration state an app sent along arrives in the continued activity's userInfo.
    static let restorationKey = "handoff.restoration"

    var deviceID: DeviceID { identity.deviceID }

    /// (available, why) for `/v1/status`.
    func discoveryState() -> (Bool, String) {
        switch discovery {
        case .running:
            return (true, "advertising privately (a random name, changed every \(settings.advertisementRotationSeconds / 60) min) on port \(listenPort); \(links.count) trusted peer(s) connected")
        case .unavailable(let why):
            return (false, why)
        }
    }

    func peers() async -> [PeerInfo] {
        // Outside a pairing window only the user's own devices are listed: a stranger's
        // certificate or random advertisement name says nothing worth showing.
        let pairingOpen = await pairing.isOpen()
        var ids = pairingOpen ? Set(devices.keys) : []
        for e in trust.all { ids.insert(e.id) }
        var list: [PeerInfo] = []
        for id in ids.sorted() {
            let d = devices[id]
            var addresses = d?.addresses ?? []
            for s in services.values where s.deviceID == id { addresses.insert(s.service.address) }
            list.append(PeerInfo(id: id.description, name: trust.entry(id)?.name.nonEmpty ?? d?.name ?? "", addresses: PeerService.tidy(addresses),
                                 trusted: trust.isTrusted(id), connected: links[id] != nil, lastSeen: d?.lastSeen))
        }
        // While pairing: workstations that are pairing too, by the name they give.
        for s in services.values where pairingOpen && s.deviceID == nil && !s.isSelf && s.service.txt["pair"] != nil {
            list.append(PeerInfo(id: nil, name: s.service.txt["n"] ?? "", addresses: [s.service.address], trusted: false, connected: false, lastSeen: nil))
        }
        return list
    }

    /// Addresses as people read them: IPv4 without its IPv6-mapped form, and link-local
    /// IPv6 only with its interface when one is known.
    static func tidy(_ addresses: Set<String>) -> [String] {
        var out = Set(addresses.map { $0.hasPrefix("::ffff:") && $0.contains(".") ? String($0.dropFirst(7)) : $0 })
        for a in out where a.contains("%") { out.remove(String(a.prefix { $0 != "%" })) }
        return out.sorted()
    }

    /// Where an activity's continuation streams come from: the link to the workstation it
    /// was continued from, or else to one that offers it; and that workstation, linked or not.
    func streamOrigin(of id: ActivityID) -> (link: PeerLink?, continuedFrom: DeviceID?) {
        (book.origin(of: id), book.continuedOrigin(of: id))
    }

    func rememberContinued(_ id: ActivityID, from device: DeviceID) { book.continued(id, from: device) }

    func offers() async -> [Offer] {
        let now = clock.now()
        let live = book.offers(at: now).map { link, offer in
            Offer(device: link.device, activity: offer, ageSeconds: Double(offer.updatedAt.nanoseconds(until: now)) / 1e9)
        }
        let kept = await keeping.offers(except: Set(links.keys)).map { k in
            Offer(device: k.device, activity: ActivitySummary(k.activity, payloadSize: k.item.payload.count),
                  ageSeconds: Double(k.activity.updatedAt.nanoseconds(until: now)) / 1e9, kept: true, stale: k.item.stale)
        }
        return live + kept
    }

    func trustDevice(_ text: String, name: String?, address: String? = nil) async throws(HandoffError) -> TrustChange {
        if let address { _ = try Self.hostAndPort(address) }
        let id: DeviceID
        do { id = try DeviceID(parsing: text) } catch {
            throw HandoffError(.badRequest, code: "bad_device_id", message: "\(error.description); `handoffctl id` on the other workstation prints its ID")
        }
        guard id != identity.deviceID else {
            throw HandoffError(.badRequest, code: "bad_device_id", message: "that is this workstation's own ID; trust the other workstation's (`handoffctl id` there)")
        }
        if let r = account.membership.removed.first(where: { $0.id == id }) {
            throw HandoffError(.conflict, code: "removed", message: "\(id) was removed from your account on \(r.removedAt.rfc3339); removal is final: a device can come back only with a new identity")
        }
        let chosen = name?.nonEmpty ?? devices[id]?.name.nonEmpty ?? trust.entry(id)?.name ?? ""
        do { try await trust.trust(id, name: chosen, address: address, at: clock.now()) } catch {
            throw .notSaved("the trusted devices", error)
        }
        if let address { addStaticPeer(address) }
        trusted(id)
        return TrustChange(deviceID: id.description, name: chosen, trusted: true)
    }

    /// A device became trusted: forget throttles (what was refused as untrusted may now be
    /// welcome) and dial what is advertised.
    func trusted(_ id: DeviceID) { perform(dialBook.trusted(id, dialFacts, at: clock.now())) }

    func untrustDevice(_ text: String) async throws(HandoffError) -> TrustChange {
        let id: DeviceID
        do { id = try DeviceID(parsing: text) } catch { throw HandoffError(.badRequest, code: "bad_device_id", message: error.description) }
        // A member is trusted by every member: untrusting it here alone would not last.
        if id != identity.deviceID, account.membership.members.contains(where: { $0.id == id }) {
            var change = try await removeFromAccount(text)
            change.trusted = false
            return change
        }
        // In force at once; a file that cannot be saved is reported by the request's settling.
        let was = trust.untrust(id)
        guard was else { throw HandoffError(.notFound, code: "not_trusted", message: "\(id) was not trusted") }
        perform(book.untrusted(id))
        return TrustChange(deviceID: id.description, trusted: false)
    }

    /// Where an offer comes from: a linked origin (its payload is fetched fresh), or what
    /// this workstation keeps for an origin that sleeps (its payload is here already).
    enum OfferSource: Sendable {
        case live(PeerLink)
        case kept(KeptOffer, device: PeerDevice)

        var device: PeerDevice {
            switch self {
            case .live(let link): link.device
            case .kept(_, let device): device
            }
        }
    }

    /// Picks an offered activity (a linked origin's, or one kept for an origin that
    /// sleeps), gets its payload (fetched fresh from the origin, or the kept one), checks
    /// it, and tells the origin it was continued. Failures become `did-fail-to-continue`.
    func continueActivity(from: String?, type: String?, id: String?, launch: Bool = false) async throws(HandoffError) -> ContinuedActivity {
        let now = clock.now()
        var candidates = links.compactMap { deviceID, link in
            devices[deviceID]?.offer.map {
                OfferChoice.Candidate(peer: OfferSource.live(link), offer: $0, matchesFrom: from.map { matches(deviceID, name: link.deviceName, $0) } ?? true)
            }
        }
        for k in await keeping.offers(except: Set(links.keys)) {
            let summary = ActivitySummary(k.activity, payloadSize: k.item.payload.count)
            candidates.append(.init(peer: .kept(k.item, device: k.device), offer: summary,
                                    matchesFrom: from.map { matches(k.item.origin, name: k.device.name, $0) } ?? true))
        }
        let source: OfferSource, offer: ActivitySummary
        switch OfferChoice.choose(candidates, type: type, id: id, at: now) {
        case .success(let chosen):
            (source, offer) = (chosen.peer, chosen.offer)
        case .failure(.expired):
            return try await fail(type, HandoffError(.gone, code: "expired", message: "the activity offered has expired"))
        case .failure(.nothingOffered):
            let what = [from.map { "from \($0)" }, type.map { "of type \($0)" }, id.map { "with id \($0)" }].compactMap { $0 }.joined(separator: " ")
            let message = links.isEmpty && candidates.isEmpty
                ? "no trusted workstation is connected; `handoffctl peers` shows what this one sees"
                : "no workstation offers an activity\(what.isEmpty ? "" : " " + what)"
            return try await fail(type, HandoffError(.notFound, code: "nothing_offered", message: message))
        }
        let device = source.device
        await registry.broadcast(.willContinue(activityType: offer.activityType, device: device))
        let result: PeerMessage.FetchResult
        switch source {
        case .live(let link):
            result = await link.fetch(offer.id, timeout: settings.fetchTimeout)
        case .kept(let item, _):
            do { result = .activity(try item.activity(), stale: item.stale) } catch {
                result = .failure(code: "invalid-payload", message: error.description)
            }
        }
        switch result {
        case .failure(let code, let message):
            return try await fail(offer.activityType, OfferChoice.failure(code: code, message: message))
        case .activity(let activity, let stale):
            if let problem = OfferChoice.problem(with: activity, offered: offer, limits: limits, at: now) {
                return try await fail(offer.activityType, HandoffError(.peerFailed, code: "invalid_payload", message: "\(device.name) sent an unusable payload: \(problem)"))
            }
            switch source {
            case .live(let link):
                link.send(.continued(activityID: activity.id))
                rememberContinued(activity.id, from: link.deviceID)
            case .kept(let item, _):
                // Its streams can only come from the origin, once it is back.
                rememberContinued(activity.id, from: item.origin)
            }
            let record = ActivityRecord(activity: activity, state: .current, owner: "peer",
                                        payloadSize: ActivityPropertyList.encodedSize(of: activity), stale: stale)
            let terminal = await terminalContinuation(of: activity)
            continued.add(record, from: device, at: clock.now(), terminal: terminal)
            await registry.broadcast(.continued(record, device: device))
            // The payload is taken whatever the launch does: its outcome rides along.
            let outcome = launch ? await agent.launch(record, from: device) : nil
            return ContinuedActivity(record: record, device: device, launch: outcome, terminal: terminal)
        }
    }

    /// An activity reopened from the history: kept like a continued one, so the session
    /// agent can map its document here.
    func rememberReopened(_ record: ActivityRecord, from device: PeerDevice) async {
        continued.add(record, from: device, at: clock.now(), terminal: await terminalContinuation(of: record.activity))
    }

    /// How a terminal continues here (nil for other activities): the settings, mosh, and
    /// this workstation's copy of its synced folder, looked up on the thread pool.
    func terminalContinuation(of activity: Activity) async -> Result<TerminalContinuation, ValidationError>? {
        guard activity.activityType == WellKnownActivityType.terminal else { return nil }
        let (transport, syncedLocal, roots) = (settings.terminalTransport, settings.terminalSyncedLocal, settings.configuredRoots)
        return try? await NIOThreadPool.singleton.runIfActive {
            ContinuedActivity.terminal(of: activity) { session in
                TerminalPreferencesHere.preferences(for: session, transport: transport, syncedLocal: syncedLocal, configuredRoots: roots)
            }
        }
    }

    /// An activity continued here lately, as `POST /v1/continue` returned it.
    func continuedActivity(_ ref: String) throws(HandoffError) -> ContinuedActivity {
        Self.continued(try continuedEntry(ref))
    }

    func continuedRecord(_ ref: String) throws(HandoffError) -> ActivityRecord {
        try continuedEntry(ref).record
    }

    private func continuedEntry(_ ref: String) throws(HandoffError) -> ContinuedActivities.Entry {
        guard let id = ActivityID(ref) else {
            throw HandoffError(.badRequest, code: "bad_id", message: "an activity id is 32 hex digits, not \"\(ref)\"")
        }
        guard let e = continued.entry(id, at: clock.now()) else {
            throw HandoffError(.notFound, code: "not_continued",
                           message: "no activity \(ref) was continued on this workstation in the last \(ContinuedActivities.retentionSeconds / 60) minutes")
        }
        return e
    }

    func continuedActivities() -> [ContinuedActivity] {
        continued.all(at: clock.now()).map(Self.continued)
    }

    private static func continued(_ e: ContinuedActivities.Entry) -> ContinuedActivity {
        ContinuedActivity(record: e.record, device: e.device, continuedAt: e.at, terminal: e.terminal)
    }

    private func fail(_ type: String?, _ error: HandoffError) async throws(HandoffError) -> ContinuedActivity {
        await registry.broadcast(.didFailToContinue(activityType: type, code: error.code, message: error.message))
        throw error
    }

    /// `become-current --to`: trusted workstations by name, device ID or short ID.
    func targets(_ names: [String]) throws(HandoffError) -> [DeviceID] {
        var out: [DeviceID] = []
        for text in names {
            let found = trust.all.filter { matches($0.id, name: $0.name, text) }
            guard found.count == 1 else {
                throw HandoffError(.badRequest, code: "unknown_workstation", message: found.isEmpty
                    ? "\"\(text)\" is none of your workstations: `handoffctl devices` lists them"
                    : "\"\(text)\" names \(found.count) workstations: give the device ID of the one you mean")
            }
            if !out.contains(found[0].id) { out.append(found[0].id) }
        }
        return out
    }

    private func matches(_ id: DeviceID, name: String, _ text: String) -> Bool {
        if name.lowercased() == text.lowercased() { return true }
        if trust.entry(id)?.name.lowercased() == text.lowercased() { return true }
        if let parsed = try? DeviceID(parsing: text) { return parsed == id }
        // A short ID (the first group) is enough when it is unambiguous.
        let compact = text.uppercased().filter { $0 != "-" }
        return compact.count >= 7 && id.description.filter { $0 != "-" }.hasPrefix(compact)
    }
}
