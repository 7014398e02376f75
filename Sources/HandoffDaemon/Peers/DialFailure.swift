import NIOCore
import NIOPosix
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// Why dialling a workstation failed, decided from the error's type where it is caught,
/// and said in words a user can act on (`handoffctl doctor`).
enum DialFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing listens on that port.
    case refused
    /// No route to the address (the system's reason).
    case unreachable(String)
    /// Nothing answered in time.
    case noAnswer
    case tlsFailed
    /// Anything else, as the error says it.
    case other(String)

    init(_ error: any Error) {
        switch error {
        case let e as DialFailure:
            self = e
        case let e as IOError:
            switch e.errnoCode {
            case ECONNREFUSED: self = .refused
            case EHOSTUNREACH, ENETUNREACH: self = .unreachable(String(cString: strerror(e.errnoCode)))
            case ETIMEDOUT: self = .noAnswer
            default: self = .other("\(e)")
            }
        case ChannelError.connectTimeout:
            self = .noAnswer
        case let e as NIOConnectionError:
            // A name with several addresses: the first attempt's failure stands for all.
            self = e.connectionErrors.first.map { DialFailure($0.error) } ?? .other("\(e)")
        case is NIOSSLError, is BoringSSLError:
            self = .tlsFailed
        default:
            self = .other("\(error)")
        }
    }

    var description: String {
        switch self {
        case .refused: "connection refused: nothing listens on that port (is handoffd running there?)"
        case .unreachable(let why): "no route to it (\(why))"
        case .noAnswer: "no answer: a firewall may drop the peer port, or the address is not reachable from here"
        case .tlsFailed: "the TLS handshake failed: the other workstation may not trust this one any more: pair them again (`handoffctl pair` on both; if this one was removed from your account, `handoffctl pair --new-identity` here)"
        case .other(let text): text
        }
    }
}
