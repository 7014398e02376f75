import Crypto
import HandoffCore
import X509

/// The user's account of devices, without a cloud: a set of signed statements that
/// every member keeps and exchanges (Docs/PeerProtocol.md §17). Pure: statements go in,
/// who is a member comes out, the same on every member that holds the same statements.
///
/// - A statement counts when its signature verifies with its signer's key (this device's,
///   or the certificate in an add statement for the signer) and the signer's previous
///   statement is known (each signer's statements form a hash chain).
/// - Introduced: this device, and whoever an introduced device added, transitively.
/// - Removed: whoever an introduced device removed. Removal is final: no add, earlier or
///   later, by anyone, brings a device back.
/// - Members: introduced and not removed. If this device itself was removed, it is alone.
struct AccountLog: Sendable {
    /// Each signer's statements are capped, so one member (say a stolen laptop not yet
    /// removed) cannot fill the log and freeze it for everyone; with at most
    /// `maximumStatementsPerSigner` members' worth of signers that bounds the whole log.
    static let maximumStatementsPerSigner = 64
    static let maximumSigners = 64

    struct Member: Sendable, Equatable {
        let id: DeviceID
        let name: String
        /// Who added it first, and when (nil for this device, unless another added it).
        let introducedBy: DeviceID?
        let introducedAt: Timestamp?
    }

    struct Removal: Sendable, Equatable {
        let id: DeviceID
        let name: String
        let removedBy: DeviceID
        let removedAt: Timestamp
    }

    let own: DeviceID
    private(set) var statements: [AccountStatement] = []
    private var known: Set<[UInt8]> = []
    private var keys: [DeviceID: P256.Signing.PublicKey] = [:]

    init(own: DeviceID, ownCertificate: [UInt8]) {
        self.own = own
        if let key = Self.publicKey(ownCertificate) { keys[own] = key }
        membership = computeMembership()
    }

    /// A member's signing key; nil for a removed device, or one never added.
    func memberKey(_ id: DeviceID) -> P256.Signing.PublicKey? {
        guard membership.members.contains(where: { $0.id == id }) else { return nil }
        return keys[id]
    }

    static func publicKey(_ certificateDER: [UInt8]) -> P256.Signing.PublicKey? {
        guard let c = try? Certificate(derEncoded: certificateDER) else { return nil }
        return P256.Signing.PublicKey(c.publicKey)
    }

    /// Adds what verifies; returns the statements that were new. Statements whose signer
    /// or predecessor is not known yet wait for the rest of the batch, then are dropped
    /// (the sender will send them again with what they need).
    mutating func merge(_ incoming: [AccountStatement]) -> [AccountStatement] {
        var pending = incoming.filter { !known.contains($0.hash) }
        var accepted: [AccountStatement] = []
        var progress = true
        while progress && !pending.isEmpty {
            progress = false
            var rest: [AccountStatement] = []
            for s in pending where !known.contains(s.hash) {
                // Waiting for the signer's key or its previous statement: maybe later in the batch.
                guard let key = keys[s.signer], s.previous == AccountStatement.none || known.contains(s.previous) else {
                    rest.append(s)
                    continue
                }
                // A bad signature never becomes good: dropped at once, checked once.
                guard s.verifies(with: key), hasRoom(for: s.signer) else { continue }
                accept(s)
                accepted.append(s)
                progress = true
            }
            pending = rest
        }
        if !accepted.isEmpty { membership = computeMembership() }
        return accepted
    }

    /// Whether `signer` may sign another statement (an add needs one, its removal another).
    func canSign(_ signer: DeviceID) -> Bool { hasRoom(for: signer) }

    private func hasRoom(for signer: DeviceID) -> Bool {
        let counts = statementsPerSigner
        return (counts[signer] ?? 0) < Self.maximumStatementsPerSigner && (counts[signer] != nil || counts.count < Self.maximumSigners)
    }

    private var statementsPerSigner: [DeviceID: Int] {
        statements.reduce(into: [:]) { $0[$1.signer, default: 0] += 1 }
    }

    private mutating func accept(_ s: AccountStatement) {
        statements.append(s)
        known.insert(s.hash)
        if s.kind == .add, keys[s.subject] == nil, let key = Self.publicKey(s.certificate) { keys[s.subject] = key }
    }

    /// A statement by this device, chained after its previous one.
    struct Full: Error, CustomStringConvertible {
        var description: String { "this device has signed \(AccountLog.maximumStatementsPerSigner) account statements, the most a member may" }
    }

    mutating func append(_ kind: AccountStatement.Kind, subject: DeviceID, name: String, certificate: [UInt8], at: Timestamp,
                         key: P256.Signing.PrivateKey) throws -> AccountStatement {
        guard hasRoom(for: own) else { throw Full() }
        let mine = statements.filter { $0.signer == own }
        let referenced = Set(mine.map(\.previous))
        let head = mine.last { !referenced.contains($0.hash) }?.hash ?? AccountStatement.none
        let s = try AccountStatement.make(kind, subject: subject, name: name, certificate: certificate, previous: head, at: at,
                                          signer: own, key: key)
        accept(s)
        membership = computeMembership()
        return s
    }

    /// Who is in and who was removed, from the statements alone. Worked out again only
    /// when statements are added: dialling and trust checks read it often.
    private(set) var membership: (members: [Member], removed: [Removal]) = ([], [])

    private func computeMembership() -> (members: [Member], removed: [Removal]) {
        // In time order (ties by hash), so every member picks the same introducer.
        let adds = statements.filter { $0.kind == .add }.sorted { $0.at != $1.at ? $0.at < $1.at : $0.hash.lexicographicallyPrecedes($1.hash) }
        var introduced: [DeviceID: AccountStatement?] = [own: nil]
        var grew = true
        while grew {
            grew = false
            for s in adds where introduced[s.signer] != nil && introduced[s.subject] == nil {
                introduced[s.subject] = s
                grew = true
            }
        }
        var removals: [DeviceID: AccountStatement] = [:]
        for s in statements where s.kind == .remove && introduced[s.signer] != nil {
            if let r = removals[s.subject], r.at < s.at || (r.at == s.at && !s.hash.lexicographicallyPrecedes(r.hash)) { continue }
            removals[s.subject] = s
        }
        func name(_ id: DeviceID) -> String { adds.first { $0.subject == id }?.name ?? "" }
        let removed = removals.values.map { Removal(id: $0.subject, name: name($0.subject), removedBy: $0.signer, removedAt: $0.at) }
            .sorted { $0.removedAt < $1.removedAt }
        if removals[own] != nil {
            return ([Member(id: own, name: name(own), introducedBy: nil, introducedAt: nil)], removed)
        }
        let members = introduced.filter { removals[$0.key] == nil }.map { id, s in
            Member(id: id, name: name(id), introducedBy: s?.signer, introducedAt: s?.at)
        }.sorted { ($0.introducedAt ?? Timestamp(seconds: 0), $0.id) < ($1.introducedAt ?? Timestamp(seconds: 0), $1.id) }
        return (members, removed)
    }
}
