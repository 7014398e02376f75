import Crypto
import SwiftASN1
import X509
#if canImport(FoundationEssentials)
import FoundationEssentials  // Date alone: full Foundation would load ICU (Docs/Performance.md)
#else
import Foundation
#endif

/// The certificate a KDE Connect device shows in TLS: self-signed, its CN the device id,
/// O=KDE, OU=KDE Connect, valid from a year ago for ten years, as kdeconnect-kde makes
/// them (core/sslhelper.cpp). Its key is EC P-256, as KDE's since 24.08 (Qt 5 cannot read
/// Ed25519). And what is read of a peer's: its CN, and its public key as the verification
/// key hashes it.
public struct KDEConnectCertificate: Sendable {
    public let certificatePEM: String
    public let privateKeyPEM: String

    public static func make(for id: KDEConnectDeviceID, now: Date) throws -> KDEConnectCertificate {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let name = try DistinguishedName {
            CommonName(id.rawValue)
            OrganizationName("KDE")
            OrganizationalUnitName("KDE Connect")
        }
        let year: TimeInterval = 365 * 86_400
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: key.publicKey,
            notValidBefore: now.addingTimeInterval(-year), notValidAfter: now.addingTimeInterval(10 * year),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions(),
            issuerPrivateKey: key)
        return KDEConnectCertificate(certificatePEM: try certificate.serializeAsPEM().pemString, privateKeyPEM: try key.serializeAsPEM().pemString)
    }

    /// The certificate's subject CN, if it has exactly one.
    public static func commonName(ofCertificate der: [UInt8]) throws -> String? {
        let certificate = try Certificate(derEncoded: der)
        let names = certificate.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }
        guard names.count == 1, let name = names.first else { return nil }
        return String(describing: name.value)
    }

    /// The certificate's SubjectPublicKeyInfo as DER: what KDE's verification key hashes
    /// (Qt's `QSslKey::toDer` of the public key). Read from the certificate's own bytes, so
    /// an RSA key (kdeconnect 22.12's) is read as well as EC.
    public static func publicKeyDER(ofCertificate der: [UInt8]) throws -> [UInt8] {
        // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version, serialNumber,
        // signature, issuer, validity, subject, subjectPublicKeyInfo, ... }, ... }
        let root = try DER.parse(der)
        guard case .constructed(let parts) = root.content, let tbs = parts.first(where: { _ in true }),
              case .constructed(let fields) = tbs.content else {
            throw KDEConnectError("a certificate that is not a DER sequence")
        }
        let all = Array(fields)
        let offset = all.first?.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) ? 1 : 0
        guard all.count > offset + 5 else { throw KDEConnectError("a certificate without a public key") }
        return Array(all[offset + 5].encodedBytes)
    }
}
