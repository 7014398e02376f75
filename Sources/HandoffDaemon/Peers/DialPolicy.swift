import HandoffCore

/// Whom to dial, when to try again, and which of two links to keep: the peer side's
/// dialling decisions as pure functions of what is known and the time, so that they are
/// tested without sockets. `PeerService` gathers the facts and performs the result.
struct DialPolicy: Sendable {
    var minimumBackoff: Int64 = 500_000_000
    var maximumBackoff: Int64 = 4_000_000_000
    var maximumStaticBackoff: Int64 = 30_000_000_000
    var untrustedRetry: Int64 = 300_000_000_000
    /// How long the side that yields waits for the other's dial before dialling itself.
    var holdBack: Int64 = 3_000_000_000
    /// How long the address a link last reached a peer at is dialled without mDNS's word
    /// (`DialBook.unlinked`); a peer away longer is found by mDNS when it is back.
    var lastLinkLifetime: Int64 = 600_000_000_000

    /// What the instance is, as far as this device knows.
    enum Identity: Sendable, Equatable {
        /// Never identified; whether its advertisement's tag checks out with our key.
        case unknown(tagChecksOut: Bool)
        case trusted
        case stranger
        case ourselves
    }

    struct Situation: Sendable, Equatable {
        var identity: Identity
        /// Configured, or where a peer was when we paired: dialled whoever it turns out to be.
        var isStatic = false
        /// Its device is linked already.
        var linked = false
        /// Another address of the same instance is being dialled, or is linked.
        var siblingBusy = false
        var notBefore: Timestamp?
        /// Some trusted device is not linked.
        var trustedMissing = false
        /// Some device trusted by ID (not in the account, so without the shared key) is not linked.
        var nonMemberMissing = false
        /// Found by mDNS while our own advertisement is up, under a name that sorts before
        /// ours: that side dials (it finds us too), so each pair makes one TLS handshake,
        /// not two. We dial only if no link came of it by `heldBackSince` + `holdBack`.
        var yields = false
        /// When the wait began: the instance was found, or its link ended.
        var heldBackSince: Timestamp?
        /// A connection from the instance's address came in and has not said hello yet:
        /// most likely its dial, made before its own advertisement was up. Waited for as a
        /// hold back, whatever the names (decided again when it settles), so that a dial
        /// already under way is not answered with a second one.
        var inboundPending = false
    }

    enum Decision: Sendable, Equatable {
        case dial
        case wait(until: Timestamp)
        case skip
    }

    /// PeerProtocol.md §3.2 and §10.4.
    func decide(_ s: Situation, at now: Timestamp) -> Decision {
        if s.linked || s.identity == .ourselves { return .skip }
        if !s.isStatic {
            switch s.identity {
            case .stranger: return .skip  // never dialled again (it may come to us to pair)
            case .unknown(let tagChecksOut):
                guard tagChecksOut ? s.trustedMissing : s.nonMemberMissing else { return .skip }
            case .trusted, .ourselves: break
            }
        }
        if s.siblingBusy { return .skip }
        var earliest = s.notBefore
        if let until = holdBackEnd(s) { earliest = max(earliest ?? until, until) }
        if let earliest, now < earliest { return .wait(until: earliest) }
        return .dial
    }

    /// When the hold back for the instance's own dial ends, if one applies (§10.4).
    func holdBackEnd(_ s: Situation) -> Timestamp? {
        guard s.yields || s.inboundPending, !s.isStatic, let since = s.heldBackSince else { return nil }
        return since.adding(nanoseconds: holdBack)
    }

    /// What a dial taught: the earliest time to dial the instance again (nil: never on a
    /// timer, as for ourselves).
    enum Outcome: Sendable, Equatable {
        case ourselves
        /// A certificate nobody here trusts.
        case stranger
        /// A trusted device that could not be linked, or no certificate seen at all.
        case failed(failures: Int)
    }

    func nextTry(after outcome: Outcome, isStatic: Bool, at now: Timestamp) -> Timestamp? {
        switch outcome {
        case .ourselves: return nil
        case .stranger: return now.adding(nanoseconds: untrustedRetry)
        case .failed(let failures): return now.adding(nanoseconds: backoff(failures: failures, isStatic: isStatic))
        }
    }

    /// 0.5 s after the first failure, doubling, up to the ceiling (30 s for static peers,
    /// which no announcement revives).
    func backoff(failures: Int, isStatic: Bool) -> Int64 {
        let ceiling = isStatic ? maximumStaticBackoff : maximumBackoff
        let shift = min(max(failures, 1) - 1, 16)
        return min(ceiling, minimumBackoff << shift)
    }

    /// Two links to one peer: both sides keep the one dialled by the smaller device ID; of
    /// two dialled from the same end, the newer (the peer may have restarted while the
    /// old socket still looked open).
    static func keepsNewLink(existingDialledBy: DeviceID, newDialledBy: DeviceID) -> Bool {
        existingDialledBy == newDialledBy || newDialledBy < existingDialledBy
    }
}
