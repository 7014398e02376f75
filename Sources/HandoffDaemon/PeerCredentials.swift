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

    static func of(_ channel: Channel) async throws -> PeerCredentials {
        guard let provider = channel as? SocketOptionProvider else {
            throw APIErrorText("this channel has no socket options")
        }
        let cred: handoff_ucred = try await provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)
        ).get()
        return PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid)
    }
}

struct APIErrorText: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
