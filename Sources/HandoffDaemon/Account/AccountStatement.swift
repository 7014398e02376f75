import Crypto
import HandoffCore

/// One signed statement of the account's membership log (Docs/PeerProtocol.md §17):
/// "`subject` is a member" (add, with its certificate, so that members who never met it
/// can check what it signs) or "`subject` is not a member any more" (remove). Signed by a
/// member's device key; `previous` chains each signer's statements by hash.
struct AccountStatement: Sendable, Hashable {
    enum Kind: UInt8, Sendable {
        case add = 1
        case remove = 2
    }

    static let magic: [UInt8] = Array("HNDA".utf8)
    static let version: UInt8 = 1
    static let maximumName = 64
    static let maximumCertificate = 2048
    static let none = [UInt8](repeating: 0, count: 32)

    let kind: Kind
    let subject: DeviceID
    let signer: DeviceID
    /// The hash of the signer's previous statement, or 32 zero bytes for its first.
    let previous: [UInt8]
    let at: Timestamp
    let name: String
    /// DER of the subject's device certificate (adds only).
    let certificate: [UInt8]
    let signature: [UInt8]

    struct Invalid: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// What the signature covers: every field before it.
    static func signedBytes(kind: Kind, subject: DeviceID, signer: DeviceID, previous: [UInt8], at: Timestamp, name: String, certificate: [UInt8]) -> [UInt8] {
        var out = magic + [version, kind.rawValue] + subject.bytes + signer.bytes + previous
        out += withUnsafeBytes(of: at.seconds.bigEndian, Array.init) + withUnsafeBytes(of: UInt32(at.nanoseconds).bigEndian, Array.init)
        let n = Array(name.utf8)
        out += [UInt8(n.count >> 8), UInt8(n.count & 0xFF)] + n
        out += [UInt8(certificate.count >> 8), UInt8(certificate.count & 0xFF)] + certificate
        return out
    }

    var signedBytes: [UInt8] {
        Self.signedBytes(kind: kind, subject: subject, signer: signer, previous: previous, at: at, name: name, certificate: certificate)
    }

    var encoded: [UInt8] {
        signedBytes + [UInt8(signature.count >> 8), UInt8(signature.count & 0xFF)] + signature
    }

    /// The statement's identity: SHA-256 of its encoding.
    var hash: [UInt8] { Array(SHA256.hash(data: encoded)) }

    /// The longest prefix of whole characters (scalars) that fits in `limit` UTF-8 bytes.
    static func cut(_ text: String, toBytes limit: Int) -> String {
        var out = String.UnicodeScalarView(), used = 0
        for scalar in text.unicodeScalars {
            let n = String(scalar).utf8.count
            guard used + n <= limit else { break }
            out.append(scalar)
            used += n
        }
        return String(out)
    }

    static func make(_ kind: Kind, subject: DeviceID, name: String, certificate: [UInt8], previous: [UInt8], at: Timestamp,
                     signer: DeviceID, key: P256.Signing.PrivateKey) throws -> AccountStatement {
        let trimmed = Self.cut(name, toBytes: maximumName)
        guard certificate.count <= maximumCertificate else { throw Invalid(description: "a certificate over \(maximumCertificate) bytes cannot go in the account") }
        let bytes = signedBytes(kind: kind, subject: subject, signer: signer, previous: previous, at: at, name: trimmed, certificate: certificate)
        let signature = try key.signature(for: bytes).derRepresentation
        return AccountStatement(kind: kind, subject: subject, signer: signer, previous: previous, at: at, name: trimmed,
                                certificate: certificate, signature: Array(signature))
    }

    /// Reads one statement; checks its shape (not its signature: see `verifies`).
    init(decoding bytes: [UInt8]) throws(Invalid) {
        var r = bytes[...]
        func take(_ n: Int) throws(Invalid) -> [UInt8] {
            guard r.count >= n else { throw Invalid(description: "account statement is truncated") }
            defer { r = r.dropFirst(n) }
            return Array(r.prefix(n))
        }
        func length() throws(Invalid) -> Int {
            let b = try take(2)
            return Int(b[0]) << 8 | Int(b[1])
        }
        guard try take(4) == Self.magic else { throw Invalid(description: "not an account statement") }
        guard try take(1) == [Self.version] else { throw Invalid(description: "account statement of an unknown version") }
        guard let kind = Kind(rawValue: try take(1)[0]) else { throw Invalid(description: "account statement of an unknown kind") }
        let subject = DeviceID(bytes: try take(32)), signer = DeviceID(bytes: try take(32)), previous = try take(32)
        let seconds = try take(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let nanos = try take(4).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        guard let at = Timestamp(validatingSeconds: seconds, nanoseconds: nanos) else { throw Invalid(description: "account statement with a bad date") }
        let nameLength = try length()
        guard nameLength <= Self.maximumName, let name = String(validating: try take(nameLength), as: UTF8.self) else {
            throw Invalid(description: "account statement with a bad name")
        }
        let certLength = try length()
        guard certLength <= Self.maximumCertificate else { throw Invalid(description: "account statement with an oversize certificate") }
        let certificate = try take(certLength)
        let sigLength = try length()
        guard (1...80).contains(sigLength) else { throw Invalid(description: "account statement with a bad signature length") }
        let signature = try take(sigLength)
        guard r.isEmpty else { throw Invalid(description: "account statement with trailing bytes") }
        switch kind {
        case .add:
            guard !certificate.isEmpty, DeviceID(bytes: Array(SHA256.hash(data: certificate))) == subject else {
                throw Invalid(description: "an add statement's certificate is not its subject's")
            }
        case .remove:
            guard certificate.isEmpty else { throw Invalid(description: "a remove statement carries no certificate") }
        }
        self.init(kind: kind, subject: subject, signer: signer, previous: previous, at: at, name: name, certificate: certificate, signature: signature)
    }

    private init(kind: Kind, subject: DeviceID, signer: DeviceID, previous: [UInt8], at: Timestamp, name: String, certificate: [UInt8], signature: [UInt8]) {
        self.kind = kind
        self.subject = subject
        self.signer = signer
        self.previous = previous
        self.at = at
        self.name = name
        self.certificate = certificate
        self.signature = signature
    }

    func verifies(with key: P256.Signing.PublicKey) -> Bool {
        guard let sig = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
        return key.isValidSignature(sig, for: signedBytes)
    }
}
