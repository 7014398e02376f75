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

    /// Loads the identity under `directory`, or makes one if there is none. A damaged
    /// identity is an error, never silently replaced: peers trust the old device ID.
    public static func loadOrCreate(directory: String) throws -> DeviceIdentity {
        let certPath = directory + "/" + certificateFile
        let keyPath = directory + "/" + keyFile
        let cert = try AtomicFile.read(certPath)
        let key = try AtomicFile.read(keyPath)
        if cert == nil && key == nil {
            try create(certPath: certPath, keyPath: keyPath)
            return try loadOrCreate(directory: directory)
        }
        guard let cert, let key else {
            throw Failure(description: "the device identity in \(directory) is incomplete (one of \(certificateFile), \(keyFile) is missing); move both away to make a new identity, then trust the new device ID on your other workstations")
        }
        do {
            let certificate = try NIOSSLCertificate(bytes: cert, format: .pem)
            let privateKey = try NIOSSLPrivateKey(bytes: key, format: .pem)
            let signingKey = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: key, as: UTF8.self))
            return DeviceIdentity(deviceID: try deviceID(of: certificate), certificate: certificate, privateKey: privateKey,
                                  signingKey: signingKey, certificateDER: try certificate.toDERBytes())
        } catch {
            throw Failure(description: "the device identity in \(directory) cannot be read (\(error)); move \(certificateFile) and \(keyFile) away to make a new one, then trust the new device ID on your other workstations")
        }
    }

    static func deviceID(of certificate: NIOSSLCertificate) throws -> DeviceID {
        DeviceID(bytes: Array(SHA256.hash(data: try certificate.toDERBytes())))
    }

    private static func create(certPath: String, keyPath: String) throws {
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
        try AtomicFile.write(Array(try certKey.serializeAsPEM().pemString.utf8), to: keyPath, mode: 0o600)
        try AtomicFile.write(Array(try certificate.serializeAsPEM().pemString.utf8), to: certPath, mode: 0o644)
    }
}
