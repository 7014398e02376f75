import Crypto
import HandoffCore
import NIOSSL
import X509
#if canImport(Glibc)
import Glibc
#endif

/// This workstation's identity: a P-256 key and a self-signed certificate made on first
/// start. The device ID is the SHA-256 of the certificate, so peers pin it and the name
/// can change freely.
public struct DeviceIdentity: Sendable {
    public let deviceID: DeviceID
    let certificate: NIOSSLCertificate
    let privateKey: NIOSSLPrivateKey
    /// The same key, for signing account statements; and the certificate's DER.
    let signingKey: P256.Signing.PrivateKey
    let certificateDER: [UInt8]

    static let certificateFile = "device-cert.pem"
    static let keyFile = "device-key.pem"

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Set when the identity found at start could not be used and a new one was made:
    /// what was wrong and where the old files were kept. Peers that trusted the old
    /// device ID no longer know this one, so the daemon logs it and the doctor says so.
    public private(set) var replaced: String?

    /// Loads the identity under `directory`, or makes one if there is none. Files that are
    /// there but hold no usable identity (truncated, damaged, one of the two missing, a key
    /// that is not the certificate's) are kept aside and a new identity is made: the old
    /// one cannot be used anyway, and the daemon's other work must go on. A file the system
    /// refuses to read (permissions, an I/O error) is an error instead, never replaced:
    /// fixing the file brings the old identity, and the peers' trust, back.
    public static func loadOrCreate(directory: String) throws -> DeviceIdentity {
        let certPath = directory + "/" + certificateFile
        let keyPath = directory + "/" + keyFile
        let cert: [UInt8]?, key: [UInt8]?
        do {
            cert = try AtomicFile.read(certPath)
            key = try AtomicFile.read(keyPath)
        } catch {
            throw Failure(description: "the device identity in \(directory) cannot be read (\(error)); fix the files' owner and permissions (handoffd runs as you), then start handoffd again")
        }
        if cert == nil && key == nil {
            return try create(certPath: certPath, keyPath: keyPath)
        }
        do {
            guard let cert, let key else {
                throw Failure(description: "\(cert == nil ? certificateFile : keyFile) is missing")
            }
            return try load(cert: cert, key: key)
        } catch {
            var kept: [String] = []
            for path in [certPath, keyPath] where access(path, F_OK) == 0 { kept.append(AtomicFile.keepAside(path)) }
            var identity = try create(certPath: certPath, keyPath: keyPath)
            identity.replaced = "the device identity found at start could not be used (\(error)), so a new one was made; the old files are kept as \(kept.joined(separator: " and "))"
            return identity
        }
    }

    private static func load(cert: [UInt8], key: [UInt8]) throws -> DeviceIdentity {
        let certificate = try NIOSSLCertificate(bytes: cert, format: .pem)
        let privateKey = try NIOSSLPrivateKey(bytes: key, format: .pem)
        let signingKey = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: key, as: UTF8.self))
        // A key that is not the certificate's fails every handshake: as unusable as a damaged file.
        guard try certificate.extractPublicKey().toSPKIBytes() == Array(signingKey.publicKey.derRepresentation) else {
            throw Failure(description: "\(keyFile) is not the key of \(certificateFile)")
        }
        return DeviceIdentity(deviceID: try deviceID(of: certificate), certificate: certificate, privateKey: privateKey,
                              signingKey: signingKey, certificateDER: try certificate.toDERBytes())
    }

    static func deviceID(of certificate: NIOSSLCertificate) throws -> DeviceID {
        DeviceID(bytes: Array(SHA256.hash(data: try certificate.toDERBytes())))
    }

    /// Makes and saves a new identity, and returns it as `load` reads it.
    private static func create(certPath: String, keyPath: String) throws -> DeviceIdentity {
        let key = P256.Signing.PrivateKey()
        let certKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName { CommonName("handoff device") }
        let now = SystemClockDate.now()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: certKey.publicKey,
            notValidBefore: now.addingTimeInterval(-86_400), notValidAfter: now.addingTimeInterval(20 * 365 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth, .clientAuth])
            },
            issuerPrivateKey: certKey)
        let keyPEM = Array(try certKey.serializeAsPEM().pemString.utf8), certPEM = Array(try certificate.serializeAsPEM().pemString.utf8)
        try AtomicFile.write(keyPEM, to: keyPath, mode: 0o600)
        try AtomicFile.write(certPEM, to: certPath, mode: 0o644)
        return try load(cert: certPEM, key: keyPEM)
    }
}
