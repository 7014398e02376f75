import HandoffCore
import HandoffPeerProtocol

/// Which offered activity `continue` takes, whether the payload that came back is usable,
/// and what a failed fetch means to the local API (PeerProtocol.md §11.2): pure.
enum OfferChoice {
    /// One connected peer's current offer.
    struct Candidate<Peer: Sendable>: Sendable {
        var peer: Peer
        var offer: ActivitySummary
        /// Whether the user's `from` names this peer.
        var matchesFrom: Bool
    }

    enum Failure: Error, Sendable, Equatable {
        /// Nothing matched the filters.
        case nothingOffered
        /// Only expired offers did.
        case expired
    }

    /// The newest unexpired offer that passes the filters.
    static func choose<Peer>(_ candidates: [Candidate<Peer>], type: String?, id: String?, at now: Timestamp) -> Result<Candidate<Peer>, Failure> {
        var expiredOnly = false
        var usable: [Candidate<Peer>] = []
        for c in candidates where c.matchesFrom {
            if let type, c.offer.activityType != type { continue }
            if let id, c.offer.id.rawValue != id.lowercased() { continue }
            if let expiry = c.offer.expirationDate, expiry <= now {
                expiredOnly = true
                continue
            }
            usable.append(c)
        }
        if let best = usable.max(by: { $0.offer.updatedAt < $1.offer.updatedAt }) { return .success(best) }
        return .failure(expiredOnly ? .expired : .nothingOffered)
    }

    /// Nil when the payload is usable: what the offer said, valid, complete, not expired.
    static func problem(with a: Activity, offered offer: ActivitySummary, limits: ActivityLimits, at now: Timestamp) -> String? {
        guard a.id == offer.id else { return "a different activity than offered" }
        guard a.activityType == offer.activityType else { return "type \(a.activityType) instead of \(offer.activityType)" }
        do { try ActivityValidation.validate(a, limits: limits) } catch { return "\(error)" }
        let missing = a.missingRequiredKeys
        guard missing.isEmpty else { return "required userInfo keys missing: \(missing.joined(separator: ", "))" }
        if a.isExpired(at: now) { return "it has expired" }
        return nil
    }

    /// A fetch that failed (a peer's code, or `timeout` or `peer-gone` from the link), as
    /// the local API reports it.
    static func failure(code wire: String, message: String) -> HandoffError {
        let code = PeerErrorCode.local(wire)
        let kind: HandoffError.Kind = switch code {
        case "timeout": .peerTimedOut
        case "expired", "not_offered": .gone
        default: .peerFailed
        }
        return HandoffError(kind, code: code, message: message)
    }
}
