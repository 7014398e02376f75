import NIOCore

/// Decides which connections to the peer port may start a TLS handshake. Until a peer
/// has said hello it is a stranger, and strangers share a small budget so that no one
/// address can starve the others: a cap per source address, a handshake rate per source
/// address, a cap on all unauthenticated connections, and one on all connections. When
/// the unauthenticated budget is full, a newcomer from a source holding fewer slots than
/// the busiest one takes the busiest source's oldest slot, so a flood from some
/// addresses slows a trusted peer's handshake down but never shuts it out. An address
/// that authenticated lately (a trusted peer's) is known good: its connections are never
/// evicted, and it may evict strangers whatever they hold, so strangers churning through
/// the budget cannot push a trusted peer's new stream connection out mid-handshake; and it
/// has a handshake rate of its own, well above a stranger's, so a peer opening streams in
/// quick succession is not refused for it (each stream is a connection).
///
/// A pure state machine: events in, decisions out, time injected. `PeerAdmissionGate`
/// runs it against real channels.
struct PeerAdmission {
    struct Limits: Sendable, Equatable {
        /// Unauthenticated connections from one source address at once.
        var perSource = 8
        /// Unauthenticated connections in all.
        var unauthenticated = 32
        /// Connections in all, authenticated or not (dialled ones are not counted).
        var total = 64
        /// Handshakes a source may start in a burst, and then per second.
        var burst = 32
        var perSecond = 8
        /// The same for a known-good address (a trusted peer's: every continuation stream
        /// it opens is a handshake). Its other limits still apply: at most `perSource`
        /// handshakes at once.
        var goodBurst = 128
        var goodPerSecond = 64
        /// Rate buckets remembered; beyond this the stalest is forgotten.
        var rememberedSources = 1024
        /// How long an address that authenticated stays known good, and how many are kept.
        var goodFor: TimeAmount = .minutes(10)
        var rememberedGood = 256
    }

    typealias Ticket = UInt64

    enum Refusal: String, Sendable, CaseIterable, Comparable {
        case perSourceRate = "over the per-address rate"
        case perSourceCap = "over the per-address cap"
        case unauthenticatedCap = "over the cap on unauthenticated connections"
        case totalCap = "over the cap on connections"

        static func < (a: Refusal, b: Refusal) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

    enum Decision: Equatable {
        /// Go ahead; `evicting`, if set, is a pending connection to close to make room.
        case admit(Ticket, evicting: Ticket?)
        case refuse(Refusal)
    }

    private struct Pending {
        let source: PeerSource
        let arrived: NIODeadline
    }

    private struct Bucket {
        var tokens: Double
        var updated: NIODeadline
    }

    let limits: Limits
    private var pending: [Ticket: Pending] = [:]
    private var pendingBySource: [PeerSource: Int] = [:]
    private var authenticated: Set<Ticket> = []
    private var buckets: [PeerSource: Bucket] = [:]
    /// Addresses that authenticated, and when they last did.
    private var good: [PeerSource: NIODeadline] = [:]
    private var nextTicket: Ticket = 1

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    var unauthenticatedCount: Int { pending.count }
    var authenticatedCount: Int { authenticated.count }
    func pendingCount(from source: PeerSource) -> Int { pendingBySource[source] ?? 0 }
    var rememberedSourceCount: Int { buckets.count }

    /// A connection from `source` was accepted at `now`.
    mutating func arrive(from source: PeerSource, at now: NIODeadline) -> Decision {
        let held = pendingBySource[source] ?? 0
        if held >= limits.perSource { return .refuse(.perSourceCap) }
        let full = pending.count >= limits.unauthenticated || pending.count + authenticated.count >= limits.total
        var evict: Ticket?
        if full {
            // Only strangers' pending connections can make room: never an authenticated
            // one, never a known-good address's.
            let trusted = isGood(source, at: now)
            guard let victim = oldestOfBusiestSource(at: now),
                  trusted || pendingBySource[victim.source, default: 0] > held else {
                return .refuse(pending.count >= limits.unauthenticated ? .unauthenticatedCap : .totalCap)
            }
            evict = victim.ticket
        }
        guard takeToken(source, good: isGood(source, at: now), at: now) else { return .refuse(.perSourceRate) }
        if let evict { remove(evict) }
        let ticket = nextTicket
        nextTicket += 1
        pending[ticket] = Pending(source: source, arrived: now)
        pendingBySource[source, default: 0] += 1
        return .admit(ticket, evicting: evict)
    }

    /// The connection said its hello: it no longer counts as a stranger, and its address
    /// is known good for a while.
    mutating func authenticate(_ ticket: Ticket, at now: NIODeadline) {
        guard let p = pending[ticket] else { return }
        remove(ticket)
        authenticated.insert(ticket)
        if good[p.source] == nil, good.count >= limits.rememberedGood,
           let stalest = good.min(by: { $0.value < $1.value })?.key {
            good[stalest] = nil
        }
        // Known good from now on: its handshakes are counted afresh, at its own rate.
        if !isGood(p.source, at: now) { buckets[p.source] = nil }
        good[p.source] = now
    }

    func isGood(_ source: PeerSource, at now: NIODeadline) -> Bool {
        guard let last = good[source] else { return false }
        return now - last < limits.goodFor
    }

    /// The connection closed (or was evicted already: then nothing happens).
    mutating func close(_ ticket: Ticket) {
        if authenticated.remove(ticket) == nil { remove(ticket) }
    }

    private mutating func remove(_ ticket: Ticket) {
        guard let p = pending.removeValue(forKey: ticket) else { return }
        let left = (pendingBySource[p.source] ?? 1) - 1
        pendingBySource[p.source] = left > 0 ? left : nil
    }

    /// The oldest pending connection of the stranger holding the most (ties: the oldest).
    private func oldestOfBusiestSource(at now: NIODeadline) -> (ticket: Ticket, source: PeerSource)? {
        var best: (ticket: Ticket, p: Pending, count: Int)?
        for (ticket, p) in pending where !isGood(p.source, at: now) {
            let count = pendingBySource[p.source] ?? 0
            if let b = best, count < b.count || (count == b.count && p.arrived >= b.p.arrived) { continue }
            best = (ticket, p, count)
        }
        return best.map { ($0.ticket, $0.p.source) }
    }

    private mutating func takeToken(_ source: PeerSource, good: Bool, at now: NIODeadline) -> Bool {
        let burst = Double(good ? limits.goodBurst : limits.burst)
        let perSecond = Double(good ? limits.goodPerSecond : limits.perSecond)
        var bucket = buckets[source] ?? Bucket(tokens: burst, updated: now)
        let elapsed = Double(max(0, (now - bucket.updated).nanoseconds)) / 1e9
        bucket.tokens = min(burst, bucket.tokens + elapsed * perSecond)
        bucket.updated = now
        guard bucket.tokens >= 1 else {
            buckets[source] = bucket
            return false
        }
        bucket.tokens -= 1
        if buckets[source] == nil { makeRoomForBucket(at: now) }
        buckets[source] = bucket
        return true
    }

    /// Keeps the bucket table bounded: a full bucket is the same as none, so those go
    /// first; if every one is still draining, the stalest goes.
    private mutating func makeRoomForBucket(at now: NIODeadline) {
        guard buckets.count >= limits.rememberedSources else { return }
        let refill = Double(limits.burst) / Double(max(1, limits.perSecond))
        let refilled = buckets.filter { Double((now - $0.value.updated).nanoseconds) / 1e9 >= refill }.map(\.key)
        for key in refilled { buckets[key] = nil }
        if buckets.count >= limits.rememberedSources, let stalest = buckets.min(by: { $0.value.updated < $1.value.updated })?.key {
            buckets[stalest] = nil
        }
    }
}

/// Where a connection comes from, for the per-address limits: its IP address, with
/// IPv4-mapped IPv6 addresses (a dual-stack listener's IPv4 peers) written as IPv4.
/// Whole addresses, not prefixes: every device of a LAN shares its /64 and fe80::/64.
struct PeerSource: Hashable, Sendable, CustomStringConvertible {
    let description: String

    init(_ text: String) {
        let lower = text.lowercased()
        if lower.hasPrefix("::ffff:"), lower.dropFirst(7).contains(".") {
            description = String(lower.dropFirst(7))
        } else {
            description = lower
        }
    }

    init(_ address: SocketAddress?) {
        self.init(address?.ipAddress ?? "unknown")
    }
}
