import HandoffCore
import NIOCore
import NIOPosix
import NIOSSL

/// How every connection this side dials starts, link, stream or pairing: TCP with
/// keepalive, TLS 1.3 pinned by `isTrusted`, the pre-authentication deadline, and framing.
struct PeerDialer: Sendable {
    let tls: PeerTLS
    let own: DeviceID
    let maximumFrameBytes: Int
    /// The handshake and the hello must both be done within this.
    let deadline: TimeAmount
    let connectTimeout: TimeAmount

    init(tls: PeerTLS, own: DeviceID, settings: PeerServiceSettings) {
        self.tls = tls
        self.own = own
        maximumFrameBytes = settings.maximumFrameBytes
        deadline = settings.handshakeTimeout + settings.helloTimeout
        connectTimeout = settings.connectTimeout
    }

    func connect(_ target: SocketAddress, on group: EventLoopGroup, isTrusted: @escaping @Sendable (DeviceID) -> Bool,
                 configuration: PeerChannel.Configuration = .init(), tuneForBulk: Bool = false,
                 note: @escaping @Sendable (PeerTLS.Verdict) -> Void = { _ in }) async throws -> PeerChannel {
        let (tls, own, maxFrame, deadline) = (self.tls, self.own, maximumFrameBytes, self.deadline)
        return try await ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelOption(PeerService.keepIdle, value: 10)
            .channelOption(PeerService.keepInterval, value: 5)
            .channelOption(PeerService.keepCount, value: 3)
            .connect(to: target) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let ops = channel.pipeline.syncOperations
                    try ops.addHandler(PreAuthenticationDeadline(deadline: deadline), name: PreAuthenticationDeadline.name)
                    let verify = PeerTLS.verifier(own: own, isTrusted: isTrusted, note: note)
                    try ops.addHandler(try NIOSSLClientHandler(context: tls.clientContext, serverHostname: nil, customVerificationCallback: verify))
                    try PeerService.addFraming(channel, maxFrame: maxFrame)
                    if tuneForBulk { StreamChannelTuning.apply(to: channel) }
                    return try PeerChannel(wrappingChannelSynchronously: channel, configuration: configuration)
                }
            }
    }
}
