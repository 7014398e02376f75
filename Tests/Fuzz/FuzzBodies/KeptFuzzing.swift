import Crypto
@testable import HandoffDaemon
import HandoffCore

/// The kept items a member sends in a `kept` message (Docs/PeerProtocol.md §18), decoded
/// and taken as one message by a keeper with small caps. Input: a mode byte, then items,
/// each with a 2-byte length. Mode even: the items as they are (what a forger can send:
/// only a signature's own bytes can change without breaking it). Mode odd: each item that
/// decodes is first made a member's (its origin set to one of three members, by its first
/// byte) and signed again with that member's key, so that every shape of item reaches the
/// book: replacement, equivocation, targets, expiry, caps.
///
/// What decodes must encode to the same bytes; a refused message changes nothing; what
/// the book holds verifies, is live, is not its own, and fits its caps; the same message
/// again takes nothing.
public enum KeptFuzzing {
    /// One input: a broken invariant is reported through `fuzzCheck` (a crash under libFuzzer).
    public static func test(_ bytes: [UInt8]) {
        var r = bytes[...]
        guard let mode = r.first else { return }
        r = r.dropFirst()
        var items: [KeptOffer] = []
        while r.count >= 2 {
            let n = Int(r[r.startIndex]) << 8 | Int(r[r.startIndex + 1])
            r = r.dropFirst(2)
            let bytes = Array(r.prefix(n))
            r = r.dropFirst(n)
            guard var item = try? KeptOffer(decoding: bytes, maximumPayload: 1 << 16) else { continue }
            fuzzCheck(item.encoded == bytes, "a kept item does not encode to the bytes it was read from")
            if mode & 1 == 1 {
                guard let signed = resigned(item) else { continue }
                item = signed
            }
            items.append(item)
        }
        let limits = KeptOffers.Limits(maximumOrigins: 2, maximumBytes: 4096)
        var book = KeptOffers(own: keeper, limits: limits)
        let before = book.byOrigin
        switch book.take(all: items, originKey: key(of:), at: now) {
        case .failure:
            fuzzCheck(book.byOrigin == before, "a refused message changed what is kept")
        case .success(let taken):
            fuzzCheck(taken.allSatisfy { book.byOrigin[$0.origin] == $0 }, "an item said taken is not held")
            var again = book
            guard case .success(let twice) = again.take(all: items, originKey: key(of:), at: now) else {
                fuzzFailure("a message taken once is refused the second time")
                return
            }
            fuzzCheck(twice.isEmpty && again.byOrigin == book.byOrigin, "the same message taken twice changed what is kept")
        }
        fuzzCheck(book.byOrigin.count <= limits.maximumOrigins, "over the cap of origins")
        fuzzCheck(book.byOrigin.values.reduce(0) { $0 + $1.payload.count } <= limits.maximumBytes, "over the cap of bytes")
        for (origin, item) in book.byOrigin {
            fuzzCheck(origin == item.origin && origin != keeper, "held under the wrong origin, or our own")
            fuzzCheck(item.verifies(with: key(of: origin)!) && item.isLive(at: now) && item.isFor(keeper), "holds what it should not")
        }
    }

    /// Three members with fixed keys (so that a crash reproduces), and the keeper.
    static let members: [(id: DeviceID, key: P256.Signing.PrivateKey)] = (1...3).map { n in
        (DeviceID(bytes: Array(repeating: UInt8(n), count: 32)), try! P256.Signing.PrivateKey(rawRepresentation: Array(repeating: UInt8(n), count: 32)))
    }
    static let keeper = DeviceID(bytes: Array(repeating: 9, count: 32))
    static let now = Timestamp(seconds: 1_800_000_000, nanoseconds: 0)

    static func key(of origin: DeviceID) -> P256.Signing.PublicKey? { members.first { $0.id == origin }?.key.publicKey }

    /// The item made a member's and signed with its key: the origin is bytes 6..<38, the
    /// signature follows the signed bytes with its 2-byte length.
    static func resigned(_ item: KeptOffer) -> KeptOffer? {
        var bytes = Array(item.encoded.dropLast(item.signature.count + 2))
        let member = members[Int(bytes[6]) % members.count]
        bytes.replaceSubrange(6..<38, with: member.id.bytes)
        guard let signature = try? member.key.signature(for: bytes).derRepresentation else { return nil }
        bytes += [UInt8(signature.count >> 8), UInt8(signature.count & 0xFF)] + Array(signature)
        return try? KeptOffer(decoding: bytes, maximumPayload: 1 << 16)
    }

    /// Real items made by the real code: offers (one for the keeper alone, one for another
    /// device, one stale, one expiring soon), withdrawals, a replacement and a replay, from
    /// members and from a stranger; each as is (mode 0) and to be signed again (mode 1).
    public static func seeds() throws -> [[UInt8]] {
        func offer(_ m: Int, _ title: String, sequence: UInt64, targets: [DeviceID] = [], stale: Bool = false, expires: Int64? = nil) throws -> KeptOffer {
            let a = Activity(id: .random(), activityType: "org.example.edit", title: title, userInfo: ["line": .integer(12)],
                             expirationDate: expires.map { now.adding(nanoseconds: $0 * 1_000_000_000) }, createdAt: now,
                             origin: DeviceRef(name: "desk", id: members[m].id.description))
            return try KeptOffer.offer(a, stale: stale, targets: targets, sequence: sequence, origin: members[m].id, at: now, key: members[m].key)
        }
        let first = try offer(0, "draft", sequence: 10)
        let stranger = P256.Signing.PrivateKey()
        let messages: [[KeptOffer]] = [
            [first],
            [first, try offer(0, "newer", sequence: 11)],
            [try offer(0, "newer", sequence: 11), first],
            [try offer(1, "for the keeper", sequence: 5, targets: [keeper]), try offer(2, "for another", sequence: 5, targets: [members[0].id])],
            [try offer(1, "stale", sequence: 6, stale: true), try offer(2, "brief", sequence: 7, expires: 30)],
            [try KeptOffer.withdrawal(of: first.activityID, sequence: 12, origin: members[0].id, at: now, key: members[0].key)],
            [try KeptOffer.offer(Activity(id: .random(), activityType: "org.example.edit", title: "forged", createdAt: now,
                                          origin: DeviceRef(name: "desk", id: members[0].id.description)),
                                 stale: false, sequence: 1, origin: members[0].id, at: now, key: stranger)],
            [try offer(0, "a", sequence: 20), try offer(1, "b", sequence: 20), try offer(2, "c", sequence: 20)],
        ]
        var out: [[UInt8]] = []
        for mode: UInt8 in [0, 1] {
            for message in messages {
                var bytes: [UInt8] = [mode]
                for item in message {
                    let e = item.encoded
                    bytes += [UInt8(e.count >> 8), UInt8(e.count & 0xFF)] + e
                }
                out.append(bytes)
            }
        }
        return out
    }
}
