@testable import HandoffDaemon
import HandoffCore
import HandoffPeerProtocol

/// Pairing as a sequence (Docs/PeerProtocol.md §16): the code exchange between two honest
/// sides, whose messages the input delivers, drops, replays, or replaces with forged ones,
/// and the pairing window driven through opens, attempts, codes, confirmations on either
/// side, endings, expiry and time passing. Each input byte is one step. Checked at every
/// step: a side's code never changes once made, and an initiator's code always comes
/// from a nonce that opened the commitment it received; messages other than the exchange's
/// are refused; the window holds at most one attempt and `maximumAttempts` codes, trusts
/// only when both users confirmed the code shown, and is closed once paired. At the end:
/// two sides that accepted nothing forged and got their codes show the same code.
public enum PairingFuzzing {
    /// One input: a broken invariant is reported through `fuzzCheck` (a crash under libFuzzer).
    public static func test(_ data: [UInt8]) {
        var input = data[...]
        func byte() -> UInt8? { input.popFirst() }
        func bytes(_ n: Int) -> [UInt8] {
            let out = Array(input.prefix(n))
            input = input.dropFirst(n)
            return out + [UInt8](repeating: 0, count: max(0, n - out.count))
        }
        let a = DeviceID(bytes: [UInt8](repeating: 0xA1, count: 32)), b = DeviceID(bytes: [UInt8](repeating: 0xB2, count: 32))
        var initiator = PairingExchange(role: .initiator, own: a, peer: b, nonce: bytes(32))
        var responder = PairingExchange(role: .responder, own: b, peer: a, nonce: bytes(32))
        var toInitiator = responder.opening(), toResponder: [PeerMessage] = []
        var lastToInitiator: PeerMessage?, lastToResponder: PeerMessage?
        var forgedInitiator = false, forgedResponder = false
        var failedInitiator = false, failedResponder = false
        // What the initiator accepted, to check its code against.
        var commitment: [UInt8]?, responderNonce: [UInt8]?

        func forged() -> PeerMessage {
            let n = Int(byte() ?? 32) % 40
            switch (byte() ?? 0) % 4 {
            case 0: return .pairCommit(bytes(n))
            case 1: return .pairNonce(bytes(n))
            case 2: return .pairConfirm
            default: return (try? PeerMessageCoding.decode(bytes(n))) ?? .pairConfirm
            }
        }
        func toInitiatorSide(_ m: PeerMessage, forged: Bool) {
            guard !failedInitiator else { return }
            let before = initiator.code
            do {
                let out = try initiator.receive(m)
                toResponder += out
                if forged { forgedInitiator = true }
                if case .pairCommit(let c) = m { commitment = c }
                if case .pairNonce(let nonce) = m { responderNonce = nonce }
            } catch {
                failedInitiator = true  // the connection closes
            }
            fuzzCheck(before == nil || initiator.code == before, "the initiator's code changed")
            if let code = initiator.code, before == nil {
                fuzzCheck(commitment.map { PairingCode.commitment(nonce: responderNonce ?? [], responder: b, initiator: a) == $0 } == true,
                             "the initiator made a code from a nonce that does not open the commitment")
                _ = code
            }
        }
        func toResponderSide(_ m: PeerMessage, forged: Bool) {
            guard !failedResponder else { return }
            let before = responder.code
            do {
                toInitiator += try responder.receive(m)
                if forged { forgedResponder = true }
            } catch {
                failedResponder = true
            }
            fuzzCheck(before == nil || responder.code == before, "the responder's code changed")
        }

        var window = PairingWindow()
        var now = Timestamp(seconds: 1_800_000_000)
        var ids: [UInt64] = []
        func pickID() -> UInt64 { ids.isEmpty ? 0 : ids[Int(byte() ?? 0) % ids.count] }

        while let step = byte() {
            switch step % 14 {
            case 0:
                if !toInitiator.isEmpty { let m = toInitiator.removeFirst(); lastToInitiator = m; toInitiatorSide(m, forged: false) }
            case 1:
                if !toResponder.isEmpty { let m = toResponder.removeFirst(); lastToResponder = m; toResponderSide(m, forged: false) }
            case 2: toInitiatorSide(forged(), forged: true)
            case 3: toResponderSide(forged(), forged: true)
            case 4:
                // A replay of the last honest message, to either side.
                if byte().map({ $0 % 2 == 0 }) ?? true { if let m = lastToInitiator { toInitiatorSide(m, forged: true) } }
                else if let m = lastToResponder { toResponderSide(m, forged: true) }
            case 5: if !toInitiator.isEmpty { toInitiator.removeFirst() }  // dropped
            case 6: window.open(at: now, tag: "tag")
            case 7:
                let hadAttempt = window.attempt != nil
                let id = window.begin(peer: (byte() ?? 0) % 2 == 0 ? b : a, name: "ws", address: "127.0.0.1:7443", at: now)
                if let id { ids.append(id) }
                fuzzCheck(id == nil || (!hadAttempt && window.isOpen(at: now)), "an attempt began beside another, or outside the window")
            case 8:
                let code = (byte() ?? 0) % 2 == 0 ? (initiator.code ?? responder.code ?? "000-000") : String(decoding: bytes(7), as: UTF8.self)
                window.codeReady(pickID(), code: code)
            case 9:
                let shown = window.attempt?.code
                let given = (byte() ?? 0) % 3 == 0 ? String(decoding: bytes(7), as: UTF8.self) : (shown ?? "")
                let before = window.attempt
                switch window.confirmHere(given) {
                case .confirmed(let trustNow):
                    fuzzCheck(shown != nil && given == shown, "a code other than the one shown was confirmed")
                    fuzzCheck(trustNow == (before?.confirmedThere == true), "trust decided without the other side's confirmation")
                case .mismatch:
                    fuzzCheck(shown != nil && given != shown && window.attempt?.confirmedHere == before?.confirmedHere, "a mismatch changed the attempt")
                case .nothingToConfirm:
                    fuzzCheck(shown == nil, "a shown code could not be confirmed")
                }
            case 10:
                let id = pickID()
                let trustNow = window.confirmedThere(id)
                fuzzCheck(!trustNow || (window.attempt?.id == id && window.attempt?.confirmedHere == true && window.attempt?.code != nil),
                             "trust decided without this side's confirmation")
            case 11:
                // (The daemon calls this once trust is written, after both confirmed.)
                let id = pickID()
                let matches = window.attempt?.id == id
                window.succeeded(id)
                if matches { fuzzCheck(window.paired != nil && window.attempt == nil && !window.isOpen(at: now), "success left the window open") }
            case 12:
                switch (byte() ?? 0) % 4 {
                case 0: window.attemptEnded(pickID(), reason: .otherEnded)
                case 1: window.close(.cancelled)
                case 2: window.expire(at: now)
                default: window.noteFailure(.connectionFailed("reset"))
                }
            default:
                now = now.adding(nanoseconds: Int64(byte() ?? 0) * 1_000_000_000)
            }
            fuzzCheck(window.attempts <= PairingWindow.maximumAttempts, "more attempts than allowed")
            if window.paired != nil { fuzzCheck(window.attempt == nil && !window.isOpen(at: now), "paired, yet the window is open") }
            if let e = window.expiresAt, now >= e { fuzzCheck(!window.isOpen(at: now), "the window is open after it expired") }
            _ = window.status(at: now)
        }
        if !forgedInitiator, !forgedResponder, let i = initiator.code, let r = responder.code {
            fuzzCheck(i == r, "two honest sides show different codes")
        }
    }

    /// Two nonces, then steps: an honest exchange that pairs (open, begin, the three messages,
    /// code, both confirmations, success); one with a forged nonce; one that runs out of time.
    public static func seeds() throws -> [[UInt8]] {
        let nonces = [UInt8](repeating: 1, count: 32) + [UInt8](repeating: 2, count: 32)
        let honest: [UInt8] = [6, 7, 0, 0, 1, 1, 0, 0, 8, 0, 0, 9, 0, 10, 0, 11, 0]
        let forged: [UInt8] = [6, 7, 0, 0, 1, 1, 2, 32, 1] + [UInt8](repeating: 9, count: 32) + [0, 8, 0, 0, 9, 0]
        let late: [UInt8] = [6, 7, 0, 0, 1, 1, 0, 8, 0, 0, 13, 200, 12, 2, 9, 0, 6, 7, 1]
        return [nonces + honest, nonces + forged, nonces + late]
    }
}
