import Foundation
@testable import HandoffDaemon
import HandoffCore
import Testing

/// A device of the tests: a real identity (P-256 key, certificate) in a temporary folder.
private struct Device {
    let identity: DeviceIdentity
    var log: AccountLog
    var id: DeviceID { identity.deviceID }

    init() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("account-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        identity = try DeviceIdentity.loadOrCreate(directory: dir)
        try? FileManager.default.removeItem(atPath: dir)
        log = AccountLog(own: identity.deviceID, ownCertificate: identity.certificateDER)
    }

    @discardableResult
    mutating func add(_ other: Device, at t: Int64) throws -> AccountStatement {
        try log.append(.add, subject: other.id, name: "dev-\(other.id.shortID)", certificate: other.identity.certificateDER,
                       at: Timestamp(seconds: t), key: identity.signingKey)
    }

    @discardableResult
    mutating func remove(_ other: Device, at t: Int64) throws -> AccountStatement {
        try log.append(.remove, subject: other.id, name: "", certificate: [], at: Timestamp(seconds: t), key: identity.signingKey)
    }

    /// What a connection does: each sends all it has.
    mutating func hear(_ other: Device) -> Int { log.merge(other.log.statements).count }

    var members: Set<DeviceID> { Set(log.membership.members.map(\.id)) }
}

@Suite("Account log")
struct AccountLogTests {
    /// Pairing a with b, then c with b: c is known to a through b, with b as introducer.
    @Test func aDeviceJoinsThroughAnyMember() throws {
        var a = try Device(), b = try Device(), c = try Device()
        try a.add(b, at: 10); try b.add(a, at: 10)
        _ = a.hear(b); _ = b.hear(a)
        try b.add(c, at: 20); try c.add(b, at: 20)
        _ = c.hear(b); _ = b.hear(c)
        #expect(a.hear(b) > 0)
        #expect(a.members == [a.id, b.id, c.id])
        #expect(c.members == [a.id, b.id, c.id])
        let cSeenByA = a.log.membership.members.first { $0.id == c.id }
        #expect(cSeenByA?.introducedBy == b.id && cSeenByA?.introducedAt == Timestamp(seconds: 20))
        // Hearing the same again changes nothing.
        #expect(a.hear(b) == 0 && a.hear(c) == 0)
    }

    @Test func removalIsFinalAndAStaleMemberCannotUndoIt() throws {
        var a = try Device(), b = try Device(), c = try Device()
        try a.add(b, at: 1); try b.add(a, at: 1); _ = a.hear(b); _ = b.hear(a)
        try a.add(c, at: 2); try c.add(a, at: 2); _ = b.hear(a); _ = c.hear(a); _ = a.hear(c)
        #expect(b.members.contains(c.id))
        // a removes c; b has not heard, and (stale) adds c again later.
        try a.remove(c, at: 3)
        try b.add(c, at: 4)
        _ = b.hear(a); _ = a.hear(b)
        #expect(!a.members.contains(c.id) && !b.members.contains(c.id))
        #expect(a.log.membership.removed.map(\.id) == [c.id])
        #expect(a.log.membership.removed.first?.removedBy == a.id)
        // In any order of hearing, the same result.
        var d = try Device()
        try d.add(a, at: 5); try a.add(d, at: 5)
        _ = d.hear(b); _ = d.hear(a)
        #expect(d.members == a.members)
    }

    @Test func forgedAndUnknownStatementsAreNotTaken() throws {
        var a = try Device(), b = try Device(), stranger = try Device(), victim = try Device()
        try a.add(b, at: 1); try b.add(a, at: 1); _ = a.hear(b)
        // A stranger's statements: its key is known to no member.
        try stranger.add(victim, at: 2)
        #expect(a.hear(stranger) == 0)
        #expect(!a.members.contains(victim.id))
        // A statement with a signature that does not verify.
        var forged = try stranger.add(b, at: 3).encoded
        forged[10] ^= 0xFF  // the subject changes; the signature no longer matches
        if let s = try? AccountStatement(decoding: forged) { #expect(a.log.merge([s]).isEmpty) }
        // Garbage does not even decode.
        #expect(throws: AccountStatement.Invalid.self) { try AccountStatement(decoding: [1, 2, 3]) }
        #expect(throws: AccountStatement.Invalid.self) { try AccountStatement(decoding: Array("HNDA".utf8) + [1, 9]) }
    }

    @Test func aRemovedDeviceIsAloneAndStatementsRoundTrip() throws {
        var a = try Device(), b = try Device()
        try a.add(b, at: 1); try b.add(a, at: 1); _ = a.hear(b); _ = b.hear(a)
        try a.remove(b, at: 2)
        _ = b.hear(a)
        #expect(b.members == [b.id], "a removed device is alone in its own view")
        for s in a.log.statements {
            #expect(try AccountStatement(decoding: s.encoded) == s)
        }
        // Each signer's statements are chained.
        let mine = a.log.statements.filter { $0.signer == a.id }
        #expect(mine.count == 2 && mine[1].previous == mine[0].hash && mine[0].previous == AccountStatement.none)
    }

    @Test func statementsOutOfOrderWaitForTheirPredecessors() throws {
        var a = try Device(), b = try Device(), c = try Device(), d = try Device()
        try a.add(b, at: 1); try b.add(a, at: 1); _ = a.hear(b); _ = b.hear(a)
        try b.add(c, at: 2); try b.add(d, at: 3)
        // The second of b's statements alone: its predecessor is missing, so it waits.
        let bs = b.log.statements.filter { $0.signer == b.id }
        #expect(a.log.merge([bs.last!]).isEmpty)
        // Both, in reverse order, in one batch: both are taken.
        #expect(a.log.merge(bs.reversed()).count == 2)
        #expect(a.members.isSuperset(of: [c.id, d.id]))
    }

    /// One member cannot fill the log: its statements are capped, others still get in.
    @Test func oneSignerCannotFreezeTheLog() throws {
        var a = try Device(), b = try Device(), c = try Device()
        try a.add(b, at: 1); try b.add(a, at: 1); _ = a.hear(b); _ = b.hear(a)
        // b (a stolen laptop, say) signs as many removals of made-up devices as it may.
        for n in 0..<AccountLog.maximumStatementsPerSigner - 1 {
            _ = try b.log.append(.remove, subject: DeviceID(bytes: Array(repeating: UInt8(n), count: 32)), name: "", certificate: [],
                                 at: Timestamp(seconds: Int64(10 + n)), key: b.identity.signingKey)
        }
        #expect(b.log.canSign(b.id) == false && a.log.canSign(a.id), "pairing is refused up front on b (409 account_full), not on a")
        #expect(throws: AccountLog.Full.self) { try b.remove(c, at: 999) }
        _ = a.hear(b)
        // a's own removal of b still counts, everywhere.
        try a.remove(b, at: 1000)
        var d = try Device()
        try d.add(a, at: 2); try a.add(d, at: 2)
        _ = d.hear(a)
        #expect(!d.members.contains(b.id) && !a.members.contains(b.id))
    }

    /// Names are cut at a character boundary, so the statement decodes everywhere.
    @Test func longNamesAreCutWhole() throws {
        let name = String(repeating: "é", count: 40)  // 80 bytes
        let cut = AccountStatement.cut(name, toBytes: 64)
        #expect(cut.utf8.count == 64 && cut == String(repeating: "é", count: 32))
        #expect(AccountStatement.cut("日本語のラップトップのなまえがとてもながい", toBytes: 64).utf8.count <= 64)
        var a = try Device(), b = try Device()
        let s = try a.log.append(.add, subject: b.id, name: name, certificate: b.identity.certificateDER, at: Timestamp(seconds: 1),
                                 key: a.identity.signingKey)
        #expect(try AccountStatement(decoding: s.encoded) == s)
        _ = b
    }
}
