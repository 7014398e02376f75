import Crypto
import HandoffCore

/// An offer that members keep for each other while its origin sleeps (Docs/PeerProtocol.md
/// §18): the origin's current activity with its payload, or a withdrawal ("activity X is
/// offered no more"), signed by the origin's device key so that no keeper can alter,
/// extend or make one up. Each origin numbers what it issues (`sequence`); a keeper holds
/// the highest it has seen per origin, so a newer offer or a withdrawal replaces it.
struct KeptOffer: Sendable, Equatable {
    enum Kind: UInt8, Sendable {
        case offer = 1
        case withdrawn = 2
    }

    static let magic: [UInt8] = Array("HNDK".utf8)
    static let version: UInt8 = 1
    /// An offer with no expiration date, or a withdrawal, is kept at most this long.
    static let longestKeep: Int64 = 24 * 3600
    static let maximumTargets = 16

    let kind: Kind
    let origin: DeviceID
    let sequence: UInt64
    let activityID: ActivityID
    let issuedAt: Timestamp
    /// Past this (by each keeper's own clock), nobody shows or keeps it.
    let keepUntil: Timestamp
    /// The origin could not get a fresh payload from the app before it slept.
    let stale: Bool
    /// Only these members may list, keep or continue it; empty: every member.
    let targets: [DeviceID]
    /// The activity as a binary property list (offers); empty for a withdrawal.
    let payload: [UInt8]
    let signature: [UInt8]

    struct Invalid: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// What the signature covers: every field before it.
    static func signedBytes(kind: Kind, origin: DeviceID, sequence: UInt64, activityID: ActivityID, issuedAt: Timestamp,
                            keepUntil: Timestamp, stale: Bool, targets: [DeviceID], payload: [UInt8]) -> [UInt8] {
        var out = magic + [version, kind.rawValue] + origin.bytes
        out += withUnsafeBytes(of: sequence.bigEndian, Array.init)
        let id = Array(activityID.rawValue.utf8)
        out += [UInt8(id.count)] + id
        out += Self.bytes(issuedAt) + Self.bytes(keepUntil)
        out += [stale ? 1 : 0, UInt8(targets.count)]
        for t in targets { out += t.bytes }
        out += withUnsafeBytes(of: UInt32(payload.count).bigEndian, Array.init) + payload
        return out
    }

    private static func bytes(_ t: Timestamp) -> [UInt8] {
        withUnsafeBytes(of: t.seconds.bigEndian, Array.init) + withUnsafeBytes(of: UInt32(t.nanoseconds).bigEndian, Array.init)
    }

    var signedBytes: [UInt8] {
        Self.signedBytes(kind: kind, origin: origin, sequence: sequence, activityID: activityID, issuedAt: issuedAt,
                         keepUntil: keepUntil, stale: stale, targets: targets, payload: payload)
    }

    var encoded: [UInt8] { signedBytes + [UInt8(signature.count >> 8), UInt8(signature.count & 0xFF)] + signature }

    /// The origin's current activity, to keep: until it expires, and at most `longestKeep`.
    static func offer(_ activity: Activity, stale: Bool, targets: [DeviceID] = [], sequence: UInt64, origin: DeviceID,
                      at now: Timestamp, key: P256.Signing.PrivateKey) throws -> KeptOffer {
        let longest = now.adding(nanoseconds: longestKeep * 1_000_000_000)
        let until = activity.expirationDate.map { min($0, longest) } ?? longest
        let payload = PropertyBinaryEncoding.encode(ActivityPropertyList.encode(activity))
        return try make(.offer, origin: origin, sequence: sequence, activityID: activity.id, issuedAt: now, keepUntil: until,
                        stale: stale, targets: targets, payload: payload, key: key)
    }

    /// "`id` is offered no more" (resigned, invalidated, expired, or replaced here while
    /// keepers held it): kept as long as the offer could have been.
    static func withdrawal(of id: ActivityID, targets: [DeviceID] = [], sequence: UInt64, origin: DeviceID, at now: Timestamp,
                           key: P256.Signing.PrivateKey) throws -> KeptOffer {
        try make(.withdrawn, origin: origin, sequence: sequence, activityID: id, issuedAt: now,
                 keepUntil: now.adding(nanoseconds: longestKeep * 1_000_000_000), stale: false, targets: targets, payload: [], key: key)
    }

    private static func make(_ kind: Kind, origin: DeviceID, sequence: UInt64, activityID: ActivityID, issuedAt: Timestamp, keepUntil: Timestamp,
                             stale: Bool, targets: [DeviceID], payload: [UInt8], key: P256.Signing.PrivateKey) throws -> KeptOffer {
        guard targets.count <= maximumTargets else { throw Invalid(description: "an offer goes to at most \(maximumTargets) named devices") }
        let bytes = signedBytes(kind: kind, origin: origin, sequence: sequence, activityID: activityID, issuedAt: issuedAt,
                                keepUntil: keepUntil, stale: stale, targets: targets, payload: payload)
        let signature = Array(try key.signature(for: bytes).derRepresentation)
        return KeptOffer(kind: kind, origin: origin, sequence: sequence, activityID: activityID, issuedAt: issuedAt, keepUntil: keepUntil,
                         stale: stale, targets: targets, payload: payload, signature: signature)
    }

    /// Reads one; checks its shape and that an offer's payload is the activity it names
    /// (not the signature: see `verifies`). `maximumPayload`: the activity size cap.
    init(decoding bytes: [UInt8], maximumPayload: Int) throws(Invalid) {
        var r = bytes[...]
        func take(_ n: Int) throws(Invalid) -> [UInt8] {
            guard n >= 0, r.count >= n else { throw Invalid(description: "kept offer is truncated") }
            defer { r = r.dropFirst(n) }
            return Array(r.prefix(n))
        }
        func integer(_ n: Int) throws(Invalid) -> UInt64 { try take(n).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        func timestamp() throws(Invalid) -> Timestamp {
            let seconds = Int64(bitPattern: try integer(8)), nanos = Int64(try integer(4))
            guard let t = Timestamp(validatingSeconds: seconds, nanoseconds: nanos) else { throw Invalid(description: "kept offer with a bad date") }
            return t
        }
        guard try take(4) == Self.magic else { throw Invalid(description: "not a kept offer") }
        guard try take(1) == [Self.version] else { throw Invalid(description: "kept offer of an unknown version") }
        guard let kind = Kind(rawValue: try take(1)[0]) else { throw Invalid(description: "kept offer of an unknown kind") }
        let origin = DeviceID(bytes: try take(32))
        let sequence = try integer(8)
        let idLength = Int(try integer(1))
        guard let text = String(validating: try take(idLength), as: UTF8.self), let id = ActivityID(text), id.rawValue == text else {
            throw Invalid(description: "kept offer with a bad activity id")
        }
        let issuedAt = try timestamp(), keepUntil = try timestamp()
        guard keepUntil.seconds - issuedAt.seconds <= Self.longestKeep else { throw Invalid(description: "kept offer to be kept too long") }
        let flag = try integer(1)
        guard flag <= 1 else { throw Invalid(description: "kept offer with unknown flags") }
        let targetCount = Int(try integer(1))
        guard targetCount <= Self.maximumTargets else { throw Invalid(description: "kept offer with too many targets") }
        var targets: [DeviceID] = []
        for _ in 0..<targetCount { targets.append(DeviceID(bytes: try take(32))) }
        let payloadLength = Int(try integer(4))
        guard payloadLength <= maximumPayload else { throw Invalid(description: "kept offer over the \(maximumPayload)-byte activity cap") }
        let payload = try take(payloadLength)
        let sigLength = Int(try integer(2))
        guard (1...80).contains(sigLength) else { throw Invalid(description: "kept offer with a bad signature length") }
        let signature = try take(sigLength)
        guard r.isEmpty else { throw Invalid(description: "kept offer with trailing bytes") }
        self.init(kind: kind, origin: origin, sequence: sequence, activityID: id, issuedAt: issuedAt, keepUntil: keepUntil,
                  stale: flag == 1, targets: targets, payload: payload, signature: signature)
        switch kind {
        case .offer:
            let activity = try self.activity()
            guard activity.id == id else { throw Invalid(description: "a kept offer's payload is another activity") }
        case .withdrawn:
            guard payload.isEmpty, !stale else { throw Invalid(description: "a withdrawal carries no payload") }
        }
    }

    private init(kind: Kind, origin: DeviceID, sequence: UInt64, activityID: ActivityID, issuedAt: Timestamp, keepUntil: Timestamp,
                 stale: Bool, targets: [DeviceID], payload: [UInt8], signature: [UInt8]) {
        self.kind = kind
        self.origin = origin
        self.sequence = sequence
        self.activityID = activityID
        self.issuedAt = issuedAt
        self.keepUntil = keepUntil
        self.stale = stale
        self.targets = targets
        self.payload = payload
        self.signature = signature
    }

    /// The offered activity (offers only).
    func activity() throws(Invalid) -> Activity {
        guard kind == .offer else { throw Invalid(description: "a withdrawal has no activity") }
        do {
            return try ActivityPropertyList.decode(try PropertyBinaryEncoding.decode(payload))
        } catch let e as ValidationError {
            throw Invalid(description: "kept offer with a bad activity: \(e)")
        } catch {
            throw Invalid(description: "kept offer with an unreadable payload: \(error)")
        }
    }

    func verifies(with key: P256.Signing.PublicKey) -> Bool {
        guard let sig = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
        return key.isValidSignature(sig, for: signedBytes)
    }

    /// Whether `device` may list, keep or continue it.
    func isFor(_ device: DeviceID) -> Bool { targets.isEmpty || targets.contains(device) }

    func isLive(at now: Timestamp) -> Bool { now < keepUntil }
}
