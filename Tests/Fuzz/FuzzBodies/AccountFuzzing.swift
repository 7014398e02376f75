import Crypto
@testable import HandoffDaemon
import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

/// The account statements other workstations send (Docs/PeerProtocol.md §17): each is
/// decoded, then merged into an account log batch by batch, as linked peers' `account`
/// messages are, one after another. Input: the own device certificate (2-byte length,
/// DER), then statements, each with a 2-byte length; an empty one ends a batch (a message).
/// What decodes must encode to the same bytes; every merge must keep this device a member
/// and accept nothing twice (nor again in a later message); and what was accepted, merged
/// at once into a fresh log, must give the same account as the messages did.
public enum AccountFuzzing {
    /// One input: a broken invariant is reported through `fuzzCheck` (a crash under libFuzzer).
    public static func test(_ bytes: [UInt8]) {
        var r = bytes[...]
        func chunk() -> [UInt8]? {
            guard r.count >= 2 else { return nil }
            let n = Int(r[r.startIndex]) << 8 | Int(r[r.startIndex + 1])
            r = r.dropFirst(2)
            let out = Array(r.prefix(n))
            r = r.dropFirst(n)
            return out
        }
        guard let ownCertificate = chunk() else { return }
        var batches: [[AccountStatement]] = [[]]
        while let bytes = chunk() {
            if bytes.isEmpty { batches.append([]); continue }
            guard let s = try? AccountStatement(decoding: bytes) else { continue }
            fuzzCheck(s.encoded == bytes, "a statement does not encode to the bytes it was read from")
            batches[batches.count - 1].append(s)
        }
        let own = DeviceID(bytes: Array(ownCertificate.sha256))
        var log = AccountLog(own: own, ownCertificate: ownCertificate)
        var accepted: [AccountStatement] = []
        var seen = Set<[UInt8]>()
        for batch in batches {
            let taken = log.merge(batch)
            fuzzCheck(log.membership.members.contains { $0.id == own }, "this device is not a member of its own account")
            fuzzCheck(log.merge(batch).isEmpty, "a statement was accepted twice")
            for s in taken { fuzzCheck(seen.insert(s.encoded).inserted, "a statement was accepted again in a later message") }
            accepted += taken
        }
        var again = AccountLog(own: own, ownCertificate: ownCertificate)
        _ = again.merge(accepted)
        fuzzCheck(again.membership.members == log.membership.members && again.membership.removed == log.membership.removed,
                     "what was accepted does not give the same account again")
    }

    /// Real accounts made by the real code: a adds b, b adds c, b removes c, a is removed by
    /// b (so this device is alone), and a chain that arrives out of order.
    public static func seeds() throws -> [[UInt8]] {
        func identity() throws -> DeviceIdentity {
            var template = Array("/tmp/handoff-fuzz-XXXXXX".utf8CString)
            guard let dir = mkdtemp(&template) else { throw DeviceIdentity.Failure(description: "mkdtemp failed") }
            return try DeviceIdentity.loadOrCreate(directory: String(cString: dir))
        }
        let a = try identity(), b = try identity(), c = try identity()
        var logA = AccountLog(own: a.deviceID, ownCertificate: a.certificateDER)
        var logB = AccountLog(own: b.deviceID, ownCertificate: b.certificateDER)
        let addB = try logA.append(.add, subject: b.deviceID, name: "ws-b", certificate: b.certificateDER, at: Timestamp(seconds: 1_800_000_000), key: a.signingKey)
        _ = logB.merge([addB])
        let addC = try logB.append(.add, subject: c.deviceID, name: "ws-c", certificate: c.certificateDER, at: Timestamp(seconds: 1_800_000_100), key: b.signingKey)
        let removeC = try logB.append(.remove, subject: c.deviceID, name: "ws-c", certificate: [], at: Timestamp(seconds: 1_800_000_200), key: b.signingKey)
        let removeA = try logB.append(.remove, subject: a.deviceID, name: "ws-a", certificate: [], at: Timestamp(seconds: 1_800_000_300), key: b.signingKey)
        func input(_ own: DeviceIdentity, _ list: [AccountStatement]) -> [UInt8] {
            var out: [UInt8] = []
            for bytes in [own.certificateDER] + list.map(\.encoded) { out += [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }
            return out
        }
        // As separate messages: each statement alone, and a removal before what it removes.
        func messages(_ own: DeviceIdentity, _ batches: [[AccountStatement]]) -> [UInt8] {
            var out = input(own, [])
            for batch in batches { out += input(own, batch).dropFirst(2 + own.certificateDER.count) + [0, 0] }
            return out
        }
        return [input(a, [addB, addC]), input(a, [addB, addC, removeC]), input(a, [removeA, removeC, addC, addB]), input(c, [addB, addC, removeC]),
                messages(a, [[addB], [addC], [removeC]]), messages(c, [[removeC], [addB, addC], [removeC]]), messages(a, [[addC], [addB], [removeA]])]
    }
}

extension Array where Element == UInt8 {
    var sha256: [UInt8] { Array(Crypto.SHA256.hash(data: self)) }
}
