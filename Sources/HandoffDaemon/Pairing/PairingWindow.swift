import HandoffCore
import HandoffControlAPI

/// Whether this workstation is pairing, and with whom: a pure state machine with the
/// clock passed in. `handoffctl pair` opens a window of two minutes; within it one
/// attempt runs at a time (a connection from or to another workstation whose window is
/// open), at most `maximumAttempts` in all, and an attempt ends in trust only when the
/// users on both sides confirmed the same code.
struct PairingWindow {
    static let duration: Int64 = 120_000_000_000
    static let maximumAttempts = 5

    struct Attempt: Equatable {
        let id: UInt64
        let peer: DeviceID
        var name: String
        let address: String
        var code: String?
        var confirmedHere = false
        var confirmedThere = false
    }

    enum Confirmation: Equatable {
        /// Tell the other side; and trust it now if it confirmed already.
        case confirmed(trustNow: Bool)
        /// The code the user gave is not this attempt's: it ends (someone may be in the middle).
        case mismatch
        case nothingToConfirm
    }

    private(set) var expiresAt: Timestamp?
    private(set) var attempt: Attempt?
    private(set) var attempts = 0
    private(set) var paired: (id: DeviceID, name: String)?
    private(set) var lastFailure: PairingFailure?
    /// Changes with each window: what the advertisement carries while pairing.
    private(set) var tag: String?
    private var nextID: UInt64 = 1

    func isOpen(at now: Timestamp) -> Bool { expiresAt.map { now < $0 } ?? false }

    /// Opens the window, or keeps the one open (a second `pair` joins it).
    mutating func open(at now: Timestamp, tag newTag: String) {
        guard !isOpen(at: now) else { return }
        expiresAt = now.adding(nanoseconds: Self.duration)
        tag = newTag
        attempt = nil
        attempts = 0
        paired = nil
        lastFailure = nil
    }

    mutating func close(_ reason: PairingFailure?) {
        expiresAt = nil
        tag = nil
        if let reason, paired == nil { lastFailure = reason }
        attempt = nil
    }

    /// A pairing connection wants to start; its id, or nil when it must be refused.
    /// Attempts count once they have a code (a stranger that connects and says nothing
    /// is cut off by a deadline instead, without using up the window).
    mutating func begin(peer: DeviceID, name: String, address: String, at now: Timestamp) -> UInt64? {
        guard isOpen(at: now), attempt == nil, paired == nil, attempts < Self.maximumAttempts else { return nil }
        defer { nextID += 1 }
        attempt = Attempt(id: nextID, peer: peer, name: name, address: address)
        return nextID
    }

    mutating func codeReady(_ id: UInt64, code: String) {
        guard attempt?.id == id, attempt?.code == nil else { return }
        attempt?.code = code
        attempts += 1
    }

    /// The user here confirms `code` (typed, or answered yes to).
    mutating func confirmHere(_ code: String) -> Confirmation {
        guard let a = attempt, let shown = a.code else { return .nothingToConfirm }
        guard code == shown else { return .mismatch }
        attempt?.confirmedHere = true
        return .confirmed(trustNow: a.confirmedThere)
    }

    /// The other side's user confirmed; true: trust it now (ours confirmed already).
    mutating func confirmedThere(_ id: UInt64) -> Bool {
        guard attempt?.id == id, attempt?.code != nil else { return false }
        attempt?.confirmedThere = true
        return attempt?.confirmedHere == true
    }

    /// Trust was written: pairing is done and the window closes.
    mutating func succeeded(_ id: UInt64) {
        guard let a = attempt, a.id == id else { return }
        paired = (a.peer, a.name)
        close(nil)
    }

    /// Something failed outside an attempt (the other workstation could not be reached).
    mutating func noteFailure(_ failure: PairingFailure) {
        lastFailure = failure
    }

    /// The attempt's connection ended without success.
    mutating func attemptEnded(_ id: UInt64, reason: PairingFailure) {
        guard attempt?.id == id else { return }
        attempt = nil
        lastFailure = reason
        if attempts >= Self.maximumAttempts { close(.tooManyAttempts(Self.maximumAttempts)) }
    }

    mutating func expire(at now: Timestamp) {
        guard let e = expiresAt, now >= e else { return }
        close(attempt == nil ? .nobodyPaired : .timeRanOut)
    }

    func status(at now: Timestamp) -> PairingStatus {
        if let p = paired { return PairingStatus(state: .paired, peer: PeerDevice(id: p.id.description, name: p.name)) }
        guard isOpen(at: now) else { return PairingStatus(state: lastFailure == nil ? .closed : .failed, message: lastFailure?.description) }
        guard let a = attempt else { return PairingStatus(state: lastFailure == nil ? .waiting : .failed, expiresAt: expiresAt, message: lastFailure?.description) }
        return PairingStatus(state: a.code == nil ? .exchanging : .code, expiresAt: expiresAt, code: a.code,
                             peer: PeerDevice(id: a.peer.description, name: a.name), peerAddress: a.address,
                             confirmedHere: a.confirmedHere, confirmedThere: a.confirmedThere)
    }
}
