import Crypto
import HandoffCore

/// What this workstation keeps for the account's other members (Docs/PeerProtocol.md
/// §18): per origin, the newest signed offer or withdrawal it has seen; and what it last
/// issued itself, with the sequence to number the next. A value: every event comes with
/// the time and what the account knows, and says what became of it, so it is tested
/// without links, disks or waiting.
struct KeptOffers: Sendable {
    struct Limits: Sendable {
        /// Origins held at once; beyond it, the one issued longest ago goes first.
        var maximumOrigins = 64
        /// Payload bytes held in all; likewise.
        var maximumBytes = 8 << 20
    }

    enum Verdict: Equatable, Sendable {
        /// Newer than what was held for its origin: kept (and worth passing on).
        case kept
        /// Held already, or older than what is held (another keeper was quicker), or past
        /// its time: nothing changes, and nothing is wrong.
        case ignored
        /// Not something a member would send: the sender is told and nothing is kept.
        case refused(String)
    }

    let own: DeviceID
    let limits: Limits
    private(set) var byOrigin: [DeviceID: KeptOffer] = [:]
    /// The last offer or withdrawal this device issued, handed to each member it links to.
    private(set) var mine: KeptOffer?
    /// The highest sequence this device issued (or was shown as its own by a keeper).
    private(set) var issued: UInt64 = 0
    /// Per origin, the sequence at or below which nothing is taken again: what the user
    /// forgot (`handoffctl forget`), or a removed device's. Part of the index, so that
    /// members do not hand it back at the next link.
    private(set) var floors: [DeviceID: UInt64] = [:]
    /// An item issued further ahead of this clock than this is not taken: with its
    /// `keep until` a day later still, nothing kept can wait beyond two days.
    static let issuedAheadTolerance: Int64 = 24 * 3600

    init(own: DeviceID, limits: Limits = Limits()) {
        self.own = own
        self.limits = limits
    }

    /// What a member sent (or what was loaded from disk). `key`: the origin's signing key
    /// if it is a member, nil if not (yet, or any more: the account's statements may still
    /// be on their way, so that is no fault of the sender's).
    mutating func take(_ item: KeptOffer, originKey key: P256.Signing.PublicKey?, at now: Timestamp) -> Verdict {
        guard let key else { return .ignored }
        guard item.verifies(with: key) else { return .refused("the origin's signature does not verify") }
        guard item.isFor(own) else { return .refused("it was not offered to this device") }
        if item.origin == own {
            // Our own (no keeper sends them; a file from an earlier life might): we know
            // better, but never number below it.
            issued = max(issued, item.sequence)
            return .ignored
        }
        guard item.isLive(at: now), item.issuedAt <= now.adding(nanoseconds: Self.issuedAheadTolerance * 1_000_000_000) else { return .ignored }
        if let floor = floors[item.origin], item.sequence <= floor { return .ignored }
        if let held = byOrigin[item.origin] {
            if item.sequence < held.sequence { return .ignored }
            if item.sequence == held.sequence {
                // The same number for something else: the origin signed two things alike, or
                // something is wrong; what is held stays.
                return item == held ? .ignored : .refused("a different offer under sequence \(item.sequence) of \(item.origin.shortID)")
            }
        }
        byOrigin[item.origin] = item
        evict()
        return byOrigin[item.origin] == item ? .kept : .ignored
    }

    /// The sequence for what this device issues next: above everything before it, and
    /// above the microseconds since 1970, so it keeps rising even if the count was lost.
    mutating func nextSequence(at now: Timestamp) -> UInt64 {
        let micros = UInt64(max(0, now.seconds)) * 1_000_000 + UInt64(max(0, now.nanoseconds) / 1000)
        issued = max(issued + 1, micros)
        return issued
    }

    /// The count as written down (the item it numbered may have expired since).
    mutating func noteIssued(_ sequence: UInt64) { issued = max(issued, sequence) }

    /// This device issued `item` (numbered by `nextSequence`): members it links to get it.
    mutating func issue(_ item: KeptOffer) {
        guard item.origin == own else { return }
        issued = max(issued, item.sequence)
        mine = item
    }

    /// One message's items, all or nothing: the items taken (newer than what was held),
    /// or the first refusal and its item, in which case nothing of the message is kept.
    mutating func take(all items: [KeptOffer], originKey key: (DeviceID) -> P256.Signing.PublicKey?,
                       at now: Timestamp) -> Result<[KeptOffer], BatchRefused> {
        var next = self
        var taken: [KeptOffer] = []
        for item in items {
            switch next.take(item, originKey: key(item.origin), at: now) {
            case .kept: taken.append(item)
            case .ignored: continue
            case .refused(let why): return .failure(BatchRefused(origin: item.origin, reason: why))
            }
        }
        self = next
        // Evicted again by a later item of the same message: not taken after all.
        return .success(taken.filter { byOrigin[$0.origin] == $0 })
    }

    struct BatchRefused: Error, Equatable, Sendable {
        let origin: DeviceID
        let reason: String
    }

    /// Drops what is past its time; returns the origins whose item went.
    mutating func expire(at now: Timestamp) -> [DeviceID] {
        let gone = byOrigin.values.filter { !$0.isLive(at: now) }.map(\.origin).sorted()
        for id in gone { byOrigin[id] = nil }
        if let m = mine, !m.isLive(at: now) { mine = nil }
        return gone
    }

    /// The origin left the account (or the user forgot it): what it offered goes too, and
    /// is not taken again (a newer item is).
    mutating func forget(_ origin: DeviceID) -> Bool {
        guard let held = byOrigin.removeValue(forKey: origin) else { return false }
        raiseFloor(origin, to: held.sequence)
        return true
    }

    /// Nothing of `origin` numbered `sequence` or below is taken again.
    private mutating func raiseFloor(_ origin: DeviceID, to sequence: UInt64) {
        floors[origin] = max(floors[origin] ?? 0, sequence)
        // Bounded like what is kept: the oldest floors go first (their items are long expired).
        while floors.count > limits.maximumOrigins * 4, let lowest = floors.min(by: { $0.value < $1.value }) { floors[lowest.key] = nil }
    }

    /// The floors as written down.
    mutating func noteFloors(_ saved: [DeviceID: UInt64]) {
        for (origin, sequence) in saved { floors[origin] = max(floors[origin] ?? 0, sequence) }
    }

    /// When the next item expires, to wake up then.
    var nextExpiry: Timestamp? { (byOrigin.values.map(\.keepUntil) + (mine.map { [$0.keepUntil] } ?? [])).min() }

    /// Per origin, the sequence held (ours included): sent on each new link, so the other
    /// side sends only what is newer.
    var index: [DeviceID: UInt64] {
        var out = floors
        for (origin, item) in byOrigin { out[origin] = max(out[origin] ?? 0, item.sequence) }
        if let m = mine { out[own] = m.sequence }
        return out
    }

    /// What `peer` lacks, by its index: newer than it holds, meant for it, and not its own.
    func newer(than theirs: [DeviceID: UInt64], for peer: DeviceID, at now: Timestamp) -> [KeptOffer] {
        (Array(byOrigin.values) + (mine.map { [$0] } ?? [])).filter { item in
            item.origin != peer && item.isFor(peer) && item.isLive(at: now) && (theirs[item.origin].map { item.sequence > $0 } ?? true)
        }.sorted { $0.origin < $1.origin }
    }

    /// Everything to write down: what is kept, and ours.
    var all: [KeptOffer] { Array(byOrigin.values) + (mine.map { [$0] } ?? []) }

    /// The offers to show here: live, not withdrawn, from origins not linked now (a linked
    /// origin's own offer is the one that counts).
    func offers(at now: Timestamp, except linked: Set<DeviceID>) -> [KeptOffer] {
        byOrigin.values.filter { $0.kind == .offer && $0.isLive(at: now) && !linked.contains($0.origin) }.sorted { $0.origin < $1.origin }
    }

    var bytes: Int { byOrigin.values.reduce(0) { $0 + $1.payload.count } }

    /// Over a cap, the item issued longest ago goes, and stays gone: its origin's floor
    /// rises to it, so that neither it (sent again) nor an older item of the same origin
    /// takes its place and pushes out another (which made the same message, taken twice,
    /// change what is kept: found by `fuzz-kept`).
    private mutating func evict() {
        while byOrigin.count > limits.maximumOrigins || bytes > limits.maximumBytes,
              let oldest = byOrigin.values.min(by: { ($0.issuedAt, $0.origin) < ($1.issuedAt, $1.origin) }) {
            byOrigin[oldest.origin] = nil
            raiseFloor(oldest.origin, to: oldest.sequence)
        }
    }
}
