import Crypto
import HandoffCore
import HandoffPeerProtocol

/// The 6-digit code two workstations show while pairing, made by commit-then-reveal so a
/// man in the middle cannot search for a collision: the responder commits to its nonce
/// before it sees the initiator's, the initiator sends its nonce before it sees the
/// responder's, and the code binds both nonces and both certificates as each side saw
/// them in its own TLS session. A relay shows different codes on the two screens unless
/// it guesses right, one chance in a million per attempt.
enum PairingCode {
    static let nonceBytes = 32

    /// SHA-256("handoff-pair-commit-v1" ‖ responder nonce ‖ responder ‖ initiator).
    static func commitment(nonce: [UInt8], responder: DeviceID, initiator: DeviceID) -> [UInt8] {
        var h = SHA256()
        h.update(data: Array("handoff-pair-commit-v1".utf8))
        h.update(data: nonce)
        h.update(data: responder.bytes)
        h.update(data: initiator.bytes)
        return Array(h.finalize())
    }

    /// The first 8 bytes of SHA-256("handoff-pair-code-v1" ‖ initiator ‖ responder ‖
    /// initiator nonce ‖ responder nonce), big-endian, modulo 10^6, with leading zeros.
    static func code(initiator: DeviceID, responder: DeviceID, initiatorNonce: [UInt8], responderNonce: [UInt8]) -> String {
        var h = SHA256()
        h.update(data: Array("handoff-pair-code-v1".utf8))
        h.update(data: initiator.bytes)
        h.update(data: responder.bytes)
        h.update(data: initiatorNonce)
        h.update(data: responderNonce)
        let n = h.finalize().prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let digits = String(n % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    static func randomNonce() -> [UInt8] {
        var g = SystemRandomNumberGenerator()
        return (0..<nonceBytes).map { _ in UInt8.random(in: 0...255, using: &g) }
    }
}

/// One side of the code exchange on a pairing connection, as a pure state machine: the
/// messages that arrive go in, the messages to send come out, and the code once both
/// nonces are known. The initiator is the side that dialled.
struct PairingExchange {
    enum Role: Sendable { case initiator, responder }

    struct Failure: Error, Equatable, CustomStringConvertible {
        let code: String
        let description: String
    }

    let role: Role
    /// This device, and the peer's certificate as this side's TLS session saw it.
    let own: DeviceID
    let peer: DeviceID
    private let nonce: [UInt8]
    private var peerCommitment: [UInt8]?
    private var sentNonce = false
    private(set) var code: String?

    init(role: Role, own: DeviceID, peer: DeviceID, nonce: [UInt8] = PairingCode.randomNonce()) {
        self.role = role
        self.own = own
        self.peer = peer
        self.nonce = nonce
    }

    /// The responder opens with its commitment; the initiator waits for it.
    func opening() -> [PeerMessage] {
        role == .responder ? [.pairCommit(PairingCode.commitment(nonce: nonce, responder: own, initiator: peer))] : []
    }

    mutating func receive(_ message: PeerMessage) throws(Failure) -> [PeerMessage] {
        switch (role, message) {
        case (.initiator, .pairCommit(let c)) where peerCommitment == nil:
            guard c.count == 32 else { throw Failure(code: "malformed", description: "a commitment is 32 bytes") }
            peerCommitment = c
            sentNonce = true
            return [.pairNonce(nonce)]
        case (.responder, .pairNonce(let theirs)) where !sentNonce:
            try Self.check(theirs)
            sentNonce = true
            code = PairingCode.code(initiator: peer, responder: own, initiatorNonce: theirs, responderNonce: nonce)
            return [.pairNonce(nonce)]
        case (.initiator, .pairNonce(let theirs)) where sentNonce && code == nil:
            try Self.check(theirs)
            guard PairingCode.commitment(nonce: theirs, responder: peer, initiator: own) == peerCommitment else {
                throw Failure(code: "commitment-mismatch", description: "the other side's nonce does not open its commitment")
            }
            code = PairingCode.code(initiator: own, responder: peer, initiatorNonce: nonce, responderNonce: theirs)
            return []
        default:
            throw Failure(code: "unexpected-message", description: "message 0x\(String(message.typeCode, radix: 16)) is out of turn in pairing")
        }
    }

    private static func check(_ nonce: [UInt8]) throws(Failure) {
        guard nonce.count == PairingCode.nonceBytes else { throw Failure(code: "malformed", description: "a pairing nonce is 32 bytes") }
    }
}
