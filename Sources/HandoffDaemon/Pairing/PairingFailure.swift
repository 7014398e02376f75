/// Why pairing did not end in trust: what `handoffctl pair` shows (`PairingStatus.message`),
/// kept as a case so that code and tests ask what happened rather than read a sentence.
enum PairingFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The user confirmed a code other than the one shown: the window closes (someone may be in the middle).
    case codeMismatch(given: String, shown: String)
    case cancelled
    /// The window ran out with no attempt, or before both users confirmed.
    case nobodyPaired
    case timeRanOut
    case tooManyAttempts(Int)
    /// The other workstation closed the connection, or said why it stopped.
    case otherEnded
    case otherStopped(String)
    /// The code exchange broke its rules (`PairingExchange.Failure`).
    case exchangeFailed(PairingExchange.Failure)
    case connectionFailed(String)
    /// A workstation that advertised pairing could not be dialled.
    case unreachable(host: String, port: Int, error: String)
    /// Its TLS refused us: it is not pairing now (its verifier lets strangers in only
    /// while its window is open).
    case notPairingThere
    case notSaved(String)

    var description: String {
        switch self {
        case .codeMismatch(let given, let shown):
            return "the code given (\(given)) is not the one shown here (\(shown)): pairing stopped. If it was typed correctly, something may be in the middle: pair again on a network you trust"
        case .cancelled: return "cancelled"
        case .nobodyPaired: return "no other workstation paired within 2 minutes: run `handoffctl pair` on both at about the same time"
        case .timeRanOut: return "the 2 minutes ran out before both sides confirmed"
        case .tooManyAttempts(let n): return "\(n) attempts failed; run `handoffctl pair` again"
        case .otherEnded: return "the other workstation ended the pairing"
        case .otherStopped(let message): return "the other workstation stopped: \(message)"
        case .exchangeFailed(let failure): return failure.description
        case .connectionFailed(let error): return "the pairing connection failed: \(error)"
        case .unreachable(let host, let port, let error): return "could not reach \(host) port \(port) to pair: \(error)"
        case .notPairingThere: return "the other workstation is not pairing now (it refused the connection): run `handoffctl pair` on it too, within 2 minutes"
        case .notSaved(let error): return "could not save the trusted devices: \(error)"
        }
    }
}

extension PairingFailure {
    /// The other side may become ready within the window: not pairing yet, not up yet.
    var isWorthRedialling: Bool {
        switch self {
        case .notPairingThere, .unreachable: true
        default: false
        }
    }

    /// A pairing dial whose connection ended before the code exchange began.
    init(_ early: PeerService.EarlyEnd) {
        switch early {
        case .closedBeforeHello: self = .otherEnded
        case .refused(let message), .incompatible(let message): self = .otherStopped(message)
        case .failed(.tlsFailed): self = .notPairingThere
        case .failed(let failure): self = .connectionFailed(failure.description)
        }
    }
}
