import HandoffKDEConnect
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// TLS as KDE Connect uses it: each side shows its self-signed certificate (CN = its
/// device id); there is no CA. A device not paired is taken on first use (what it shows
/// is checked against its id after the handshake, and pinned if the user pairs); a paired
/// device must show exactly the certificate it paired with.
struct EndpointTLS: Sendable {
    let server: NIOSSLContext
    let client: NIOSSLContext
    /// The pinned certificates (DER) of paired devices, read by the verification callback
    /// on the event loops, written by the endpoint when pairing changes.
    let pinned: NIOLockedValueBox<[KDEConnectDeviceID: [UInt8]]>

    init(certificatePEM: String, privateKeyPEM: String, pinned: [KDEConnectDeviceID: [UInt8]]) throws {
        let certificate = try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        func configure(_ c: inout TLSConfiguration) {
            // kdeconnect 22.12 (Qt 5) offers TLS 1.2 with three suites, of which BoringSSL has
            // the two ECDHE-ECDSA AES-GCM ones; later versions negotiate TLS 1.3.
            c.minimumTLSVersion = .tlsv12
            // Not .none: a server with .none never asks for the client's certificate.
            c.certificateVerification = .noHostnameVerification
            c.trustRoots = .certificates([])
            // A connection closed for what its peer sent waits this long at most for the
            // peer's close_notify (reading nothing meanwhile).
            c.shutdownTimeout = .seconds(2)
        }
        var server = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        configure(&server)
        var client = TLSConfiguration.makeClientConfiguration()
        client.certificateChain = [.certificate(certificate)]
        client.privateKey = .privateKey(key)
        configure(&client)
        self.server = try NIOSSLContext(configuration: server)
        self.client = try NIOSSLContext(configuration: client)
        self.pinned = NIOLockedValueBox(pinned)
    }

    /// The verification callback for a connection to `id` (the id its plain identity gave).
    func verifier(for id: KDEConnectDeviceID) -> NIOSSLCustomVerificationCallback {
        let pinned = self.pinned
        return { certificates, promise in
            guard let leaf = certificates.first, let der = try? leaf.toDERBytes() else {
                promise.succeed(.failed)
                return
            }
            if let expected = pinned.withLockedValue({ $0[id] }) {
                promise.succeed(der == expected ? .certificateVerified : .failed)
            } else {
                promise.succeed(.certificateVerified)
            }
        }
    }
}
