import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// TCP keepalive and user timeout for peer connections: how soon a vanished peer is noticed.
extension PeerService {
    /// A link carries small messages: notice its death within about 9 s (3 s idle, then 3
    /// probes 2 s apart; unacknowledged data is given up on after 9 s too). Stream
    /// connections keep the looser settings every connection starts with, so a reader
    /// that is only slow (a zero window, probes answered) is never cut.
    static let userTimeout = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: 18))  // TCP_USER_TIMEOUT

    static func tuneForLink(_ channel: Channel) {
        _ = channel.setOption(keepIdle, value: 3)
        _ = channel.setOption(keepInterval, value: 2)
        _ = channel.setOption(keepCount, value: 3)
        _ = channel.setOption(userTimeout, value: 9000)
    }
    // A peer that vanished (power cut, network change) is noticed in about 25 s instead of
    // Linux's default two hours, so its stale link cannot shut out its return.
    static let keepIdle = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPIDLE))
    static let keepInterval = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPINTVL))
    static let keepCount = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPCNT))
}
