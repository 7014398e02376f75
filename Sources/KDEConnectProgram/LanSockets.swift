import HandoffCore
import HandoffKDEConnect
import HandoffSystem
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The endpoint's sockets: the TCP listener on the first free port of 1716–1764, the UDP
/// socket on 1716 that hears identities and broadcasts ours, and the dials to devices
/// heard. Each connection is numbered; its events go to the endpoint's queue.
final class LanSockets: Sendable {
    let group: EventLoopGroup
    let events: EndpointEvents
    let tls: EndpointTLS
    private let numbers = NIOLockedValueBox(0)
    private let state = NIOLockedValueBox<(listener: Channel?, udp: Channel?)>((nil, nil))

    init(group: EventLoopGroup, events: EndpointEvents, tls: EndpointTLS) {
        self.group = group
        self.events = events
        self.tls = tls
    }

    private func nextNumber() -> Int { numbers.withLockedValue { $0 += 1; return $0 } }

    /// Listens on the first free TCP port of `ports`; returns it.
    func listen(own: @escaping @Sendable () -> KDEConnectIdentity, ports: ClosedRange<Int>, host: String) async throws -> Int {
        var lastError: Error?
        for port in ports {
            do {
                let channel = try await ServerBootstrap(group: group)
                    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                    .serverChannelOption(.backlog, value: 64)
                    .childChannelInitializer { [self] channel in
                        let number = nextNumber()
                        let limit = LineLimit(KDEConnectLimits.identityBytes)
                        return channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandlers([
                                ByteToMessageHandler(CappedLineDecoder(limit: limit)),
                                KDEConnectLinkHandler(number: number, role: .accepted, own: own(), tls: tls, limit: limit, events: events),
                            ])
                            events.send(.accepted(number, channel))
                        }
                    }
                    .bind(host: host, port: port).get()
                state.withLockedValue { $0.listener = channel }
                return port
            } catch {
                lastError = error
            }
        }
        throw KDEConnectError("no TCP port of \(ports) is free: \(lastError.map { "\($0)" } ?? "none to try")")
    }

    /// Hears UDP identities on `port` (shared with a kdeconnectd on the same machine, as
    /// KDE shares it) and sends ours from it.
    func listenUDP(port: Int, host: String) async throws {
        let events = self.events
        let channel = try await DatagramBootstrap(group: group)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(.socketOption(.so_broadcast), value: 1)
            // A datagram is read whole or not at all: NIO's default 2 KiB would cut
            // kdeconnect's identity (about 1.6 KiB with 22.12's capabilities, more with later ones).
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: KDEConnectLimits.identityBytes + 1))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(IdentityDatagramHandler(events: events)) }
            }
            .bind(host: host, port: port).get()
        state.withLockedValue { $0.udp = channel }
    }

    /// Our identity to each address's port 1716, each from a socket of its own: a send that
    /// fails (no route to 255.255.255.255 on this network) closes the socket it was sent
    /// from, and that must be neither the one that hears identities nor another address's.
    func broadcast(_ identity: KDEConnectIdentity, to addresses: [String]) {
        let bytes = identity.packet().encoded(id: KDEConnectLinkHandler.packetID())
        for address in addresses {
            guard let to = try? SocketAddress(ipAddress: address, port: KDEConnectLimits.discoveryPort) else { continue }
            DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_broadcast), value: 1)
                .bind(host: "0.0.0.0", port: 0)
                .whenSuccess { channel in
                    channel.writeAndFlush(AddressedEnvelope(remoteAddress: to, data: channel.allocator.buffer(bytes: bytes)))
                        .whenComplete { _ in channel.close(promise: nil) }
                }
        }
    }

    /// Dials a device heard by UDP; it becomes a link, or `dialFailed`.
    func dial(_ heard: KDEConnectIdentity, host: String, own: KDEConnectIdentity) {
        guard let port = heard.tcpPort else { return }
        let number = nextNumber()
        let limit = LineLimit(KDEConnectLimits.identityBytes)
        let (events, tls) = (self.events, self.tls)
        ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(CappedLineDecoder(limit: limit)),
                        KDEConnectLinkHandler(number: number, role: .dialled(heard), own: own, tls: tls, limit: limit, events: events),
                    ])
                }
            }
            .connect(host: host, port: port)
            .whenFailure { error in events.send(.dialFailed(heard.deviceID, "\(error)")) }
    }

    func close() {
        let (listener, udp) = state.withLockedValue { $0 }
        listener?.close(promise: nil)
        udp?.close(promise: nil)
    }
}

/// A UDP identity: read with KDE's rules (a port in 1716–1764 required), else dropped.
/// It changes nothing by itself: the endpoint may dial it, nothing more.
private final class IdentityDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let events: EndpointEvents

    init(events: EndpointEvents) { self.events = events }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        guard let host = envelope.remoteAddress.ipAddress, envelope.data.readableBytes <= KDEConnectLimits.identityBytes else { return }
        var bytes = envelope.data.readableBytesView[...]
        if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
        guard let packet = try? KDEConnectPacket.decode(bytes, limit: KDEConnectLimits.identityBytes),
              let identity = try? KDEConnectIdentity(packet, needsPort: true) else { return }
        events.send(.heard(identity, host: host))
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A datagram's error (an ICMP unreachable reported on the socket) ends nothing.
    }
}
