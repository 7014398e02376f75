import Crypto
import Foundation
import HandoffCore
import Testing
import X509
@testable import HandoffKDEConnect

/// The certificate a KDE Connect device shows, and what is read of a peer's.
@Suite("KDE Connect certificates")
struct KDEConnectCertificateTests {
    /// An RSA-2048 certificate as kdeconnect 22.12 made them (here by openssl); the SHA-256
    /// of its SubjectPublicKeyInfo as `openssl x509 -pubkey | openssl pkey -pubin -outform DER` gives it.
    static let rsaPEM = """
        -----BEGIN CERTIFICATE-----
        MIIDfzCCAmegAwIBAgIUW1UQgf6o+xxcGkCa8Hh8u/9eAocwDQYJKoZIhvcNAQEL
        BQAwTzEMMAoGA1UECgwDS0RFMRQwEgYDVQQLDAtLZGUgY29ubmVjdDEpMCcGA1UE
        AwwgMWEyYjNjNGQ1ZTZmN2E4YjljMGQxZTJmM2E0YjVjNmQwHhcNMjYxMjA3MTcy
        MjU1WhcNMzYxMjA0MTcyMjU1WjBPMQwwCgYDVQQKDANLREUxFDASBgNVBAsMC0tk
        ZSBjb25uZWN0MSkwJwYDVQQDDCAxYTJiM2M0ZDVlNmY3YThiOWMwZDFlMmYzYTRi
        NWM2ZDCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBAL3aXxnIiGJMw/Uo
        i9SKGb+mwxRdPdvTUMqC09B2DuH2C+hQSGcV+V29P0Fi7GccmgDsHU8bVT6KTFoj
        ta9Pb9A6/JTfnq8HGo1tLJ0AyxOtOVq2e3kSaAI0tAmR/0eytWnfJoOdvxg2Lg8l
        9/AL715ldqWhxr0kbW0soxviMPy7zGBG9U5V5DyNV5FBcPAyfx6whuI0t7+K012I
        uUOGlPwFReDi59c5Nz1HIiBj02D7eFs8mCsUZuJXEwZqZkRV/mhsgZgPNxWI8439
        DWwKT6MyDkfy8fzR94OvtgxJLl4aNHcpW//+QTdargZv/MRc4D6W6jbGRnX9gC1e
        RS+Dqx8CAwEAAaNTMFEwHQYDVR0OBBYEFEccDlk9vsu7259HJOidzQXmVCb8MB8G
        A1UdIwQYMBaAFEccDlk9vsu7259HJOidzQXmVCb8MA8GA1UdEwEB/wQFMAMBAf8w
        DQYJKoZIhvcNAQELBQADggEBAKk1yfZYlKkrPsON8hUqbzyATXAPVVMSb6+AXOF4
        RZHq3R469K3wwGuGzrK8zdVin39ySBfpmNAoCffBz6fGGH/K0a3ERKjcdGW4B6ay
        M1fL8gJ3To8w9Y+PZ5VbBphHxllra8DOUcMLJqKfEINrTIPf7/2gpDSsl/7AZV4D
        Ta3V8mfTKL6T169+7WAAAsKaAxmrWOvkG5BoNY4wLI08Z3SzSbFWig85lvDDh20x
        fLpEbwvSJZOWEgsZqoE1Sal03Zw+SMBhWsv+8pr3VPGm1ISl4JLiGkrI4caaSusf
        77GDhS+mmUOPoUN65b8II+arth0AkjpwkoP6ssmRIbGcGxw=
        -----END CERTIFICATE-----
        """
    static let rsaSPKISHA256 = "8caf478a27858ea7f17a7e337653e7e7ae26251be50492229b8559ab476087ca"

    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func ourCertificateNamesOurIDAndItsKeyIsReadBack() throws {
        let id = KDEConnectDeviceID.random()
        let made = try KDEConnectCertificate.make(for: id, now: Date())
        let certificate = try Certificate(pemEncoded: made.certificatePEM)
        let der = try certificate.serializeAsPEM().derBytes
        #expect(try KDEConnectCertificate.commonName(ofCertificate: der) == id.rawValue)
        #expect(certificate.subject.description.contains("O=KDE") && certificate.subject.description.contains("OU=KDE Connect"))
        #expect(certificate.issuer == certificate.subject)
        // The key as the verification key hashes it: SubjectPublicKeyInfo, as swift-crypto writes it.
        let key = try P256.Signing.PrivateKey(pemRepresentation: made.privateKeyPEM)
        #expect(try KDEConnectCertificate.publicKeyDER(ofCertificate: der) == Array(key.publicKey.derRepresentation))
        #expect(certificate.notValidBefore < Date().addingTimeInterval(-300 * 86_400) && certificate.notValidAfter > Date().addingTimeInterval(9 * 365 * 86_400))
    }

    @Test func anRSACertificateOfKDEConnect22IsRead() throws {
        let der = try Certificate(pemEncoded: Self.rsaPEM).serializeAsPEM().derBytes
        #expect(try KDEConnectCertificate.commonName(ofCertificate: der) == "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d")
        #expect(Self.hex(SHA256.hash(data: try KDEConnectCertificate.publicKeyDER(ofCertificate: der))) == Self.rsaSPKISHA256)
    }

    @Test func whatIsNotACertificateIsRefused() {
        for bytes: [UInt8] in [[], [0x30, 0x00], [0x30, 0x03, 0x30, 0x01, 0x02], Array(repeating: 0x30, count: 64)] {
            #expect(throws: (any Error).self) { _ = try KDEConnectCertificate.publicKeyDER(ofCertificate: bytes) }
            #expect(throws: (any Error).self) { _ = try KDEConnectCertificate.commonName(ofCertificate: bytes) }
        }
    }
}
