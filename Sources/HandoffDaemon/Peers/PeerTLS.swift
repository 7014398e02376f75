import Crypto
import HandoffCore
import NIOCore
import NIOSSL

/// TLS 1.3 with mutual authentication by pinned device certificates: no CA, no host
/// names; a certificate is accepted exactly when its SHA-256 is a trusted device ID.
struct PeerTLS: Sendable {
    let serverContext: NIOSSLContext
    let clientContext: NIOSSLContext

    init(identity: DeviceIdentity) throws {
        func configure(_ c: inout TLSConfiguration) {
            c.minimumTLSVersion = .tlsv13
            c.maximumTLSVersion = .tlsv13
            // Not .none: a server with .none never asks for the client's certificate.
            c.certificateVerification = .noHostnameVerification
            c.trustRoots = .certificates([])
        }
        var server = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(identity.certificate)], privateKey: .privateKey(identity.privateKey))
        configure(&server)
        var client = TLSConfiguration.makeClientConfiguration()
        client.certificateChain = [.certificate(identity.certificate)]
        client.privateKey = .privateKey(identity.privateKey)
        configure(&client)
        serverContext = try NIOSSLContext(configuration: server)
        clientContext = try NIOSSLContext(configuration: client)
    }

    /// What the verification callback decided about a certificate.
    enum Verdict: Sendable, Equatable {
        case trusted(DeviceID)
        case untrusted(DeviceID)
        case ourselves
        case unreadable
    }

    /// The verification callback: replaces all of BoringSSL's checks (there is no CA).
    /// `decide` sees the presented device ID and says yes or no; `note` hears every verdict.
    static func verifier(own: DeviceID, isTrusted: @escaping @Sendable (DeviceID) -> Bool,
                         note: @escaping @Sendable (Verdict) -> Void) -> NIOSSLCustomVerificationCallback {
        { certificates, promise in
            guard let leaf = certificates.first, let der = try? leaf.toDERBytes() else {
                note(.unreadable)
                promise.succeed(.failed)
                return
            }
            let id = DeviceID(bytes: Array(SHA256.hash(data: der)))
            if id == own {
                note(.ourselves)
                promise.succeed(.failed)
            } else if isTrusted(id) {
                note(.trusted(id))
                promise.succeed(.certificateVerified)
            } else {
                note(.untrusted(id))
                promise.succeed(.failed)
            }
        }
    }
}
