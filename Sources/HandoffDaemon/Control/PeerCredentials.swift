import CHandoffSystem
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a Unix socket, from the kernel (SO_PEERCRED): a claim the
/// client cannot forge.
struct PeerCredentials: Sendable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32

    static func of(_ channel: Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(APIErrorText("this channel has no socket options"))
        }
        let cred: EventLoopFuture<handoff_ucred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return cred.map { PeerCredentials(pid: $0.pid, uid: $0.uid, gid: $0.gid) }
    }
}

struct APIErrorText: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
