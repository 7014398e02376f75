import HandoffCore
import HandoffKDEConnect
import HandoffSystem
import NIOCore
import NIOSSL
import NIOTLS

/// One KDE Connect connection, from TCP to a link, as kdeconnect-kde's LanLinkProvider
/// makes one:
/// - a connection that came in sends its identity in plain text first (at most 8 KiB, and
///   the whole way to a link within 1 s); then this side is the TLS *client*;
/// - a connection this side made (to a device heard by UDP) writes its own identity first,
///   then this side is the TLS *server*;
/// - from protocol 8 both sides then send their identity again inside TLS, and only that
///   one counts, if it is the same device in the same version (`KDEConnectIdentity.secure`);
/// - the certificate's CN must be the device's id, and a paired device's certificate must
///   be the one it paired with (the TLS verification callback).
/// Then packets, one a line, go to the endpoint as events; it writes through the channel.
final class KDEConnectLinkHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum Role {
        case accepted
        /// We dialled the device that sent this identity by UDP.
        case dialled(KDEConnectIdentity)
    }

    private enum Phase {
        case plainIdentity
        case handshake(plain: KDEConnectIdentity)
        case secureIdentity(plain: KDEConnectIdentity, certificate: [UInt8], cn: String?)
        case linked(KDEConnectDeviceID)
        case closing
    }

    let number: Int
    let role: Role
    let own: KDEConnectIdentity
    let tls: EndpointTLS
    let limit: LineLimit
    let events: EndpointEvents
    private var phase: Phase
    private var deadline: Scheduled<Void>?

    init(number: Int, role: Role, own: KDEConnectIdentity, tls: EndpointTLS, limit: LineLimit, events: EndpointEvents) {
        self.number = number
        self.role = role
        self.own = own
        self.tls = tls
        self.limit = limit
        self.events = events
        switch role {
        case .accepted: phase = .plainIdentity
        case .dialled(let heard): phase = .handshake(plain: heard)
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // A device has 1 s from TCP to its link (KDE: the same; CVE-2020-26164). A dial
        // gets longer: its peer may be busy, and we chose to dial it.
        let seconds: Int64 = if case .accepted = role { KDEConnectLimits.identityDeadlineNanoseconds / 1_000_000_000 } else { 10 }
        let channel = context.channel
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: .seconds(seconds)) {
            if case .linked = bound.value.phase { return }
            bound.value.fail(channel, "no link within \(seconds) s")
        }
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private var started = false

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        guard case .dialled(let heard) = role else { return }
        // Ours in plain text, then TLS as the server: written before the TLS handler is
        // in the pipeline, so it leaves unencrypted.
        var plain = own
        if heard.protocolVersion >= 8 {
            plain.targetDeviceID = heard.deviceID.rawValue
            plain.targetProtocolVersion = min(heard.protocolVersion, own.protocolVersion)
        }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: plain.packet().encoded(id: Self.packetID()))), promise: nil)
        do {
            try context.pipeline.syncOperations.addHandler(
                NIOSSLServerHandler(context: tls.server, customVerificationCallback: tls.verifier(for: heard.deviceID)), position: .first)
        } catch {
            fail(context.channel, "TLS could not start: \(error)")
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        switch phase {
        case .plainIdentity:
            let identity: KDEConnectIdentity
            do {
                identity = try KDEConnectIdentity(try KDEConnectPacket.decode(line.readableBytesView, limit: KDEConnectLimits.identityBytes), needsPort: false)
            } catch {
                return fail(context.channel, "its identity: \(error)")
            }
            if let target = identity.targetDeviceID, target != own.deviceID.rawValue {
                return fail(context.channel, "\(identity.deviceID) meant another device (\(target.prefix(40)))")
            }
            if identity.deviceID == own.deviceID { return fail(context.channel, "it is this device") }
            events.send(.identified(number))
            phase = .handshake(plain: identity)
            do {
                try context.pipeline.syncOperations.addHandler(
                    try NIOSSLClientHandler(context: tls.client, serverHostname: nil, customVerificationCallback: tls.verifier(for: identity.deviceID)),
                    position: .first)
            } catch {
                fail(context.channel, "TLS could not start: \(error)")
            }
        case .handshake:
            fail(context.channel, "it sent data before TLS")
        case .secureIdentity(let plain, let certificate, let cn):
            do {
                let inside = try KDEConnectIdentity(try KDEConnectPacket.decode(line.readableBytesView, limit: KDEConnectLimits.identityBytes), needsPort: false)
                linked(context, try KDEConnectIdentity.secure(inside, plain: plain, certificateCN: cn), certificate: certificate)
            } catch {
                fail(context.channel, "its identity inside TLS: \(error)")
            }
        case .linked(let id):
            do {
                events.send(.packet(number, id, try KDEConnectPacket.decode(line.readableBytesView, limit: limit.bytes)))
            } catch {
                // KDE skips a packet it cannot read; so do we, and say so.
                events.send(.unreadable(number, id, error.description))
            }
        case .closing:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .handshakeCompleted? = event as? TLSUserEvent, case .handshake(let plain) = phase else {
            return context.fireUserInboundEventTriggered(event)
        }
        let certificate: [UInt8]
        let cn: String?
        do {
            guard let peer = try context.pipeline.syncOperations.handler(type: NIOSSLHandler.self).peerCertificate else {
                return fail(context.channel, "it showed no certificate")
            }
            certificate = try peer.toDERBytes()
            cn = try KDEConnectCertificate.commonName(ofCertificate: certificate)
        } catch {
            return fail(context.channel, "its certificate cannot be read: \(error)")
        }
        if plain.protocolVersion >= 8 && own.protocolVersion >= 8 {
            var inside = own
            inside.tcpPort = nil
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: inside.packet().encoded(id: Self.packetID()))), promise: nil)
            phase = .secureIdentity(plain: plain, certificate: certificate, cn: cn)
        } else {
            do {
                try KDEConnectIdentity.checkCertificate(of: plain.deviceID, cn: cn)
            } catch {
                return fail(context.channel, error.description)
            }
            linked(context, plain, certificate: certificate)
        }
    }

    private func linked(_ context: ChannelHandlerContext, _ identity: KDEConnectIdentity, certificate: [UInt8]) {
        deadline?.cancel()
        phase = .linked(identity.deviceID)
        linkedID = identity.deviceID
        var address: String?
        if let remote = context.channel.remoteAddress?.ipAddress { address = remote }
        events.send(.linked(LinkUp(number: number, channel: context.channel, identity: identity, certificate: certificate,
                                   address: address, dialled: { if case .dialled = role { true } else { false } }(), limit: limit)))
    }

    private var linkedID: KDEConnectDeviceID?

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        let id = linkedID
        phase = .closing
        events.send(.closed(number, id, dialled: dialledID))
        context.fireChannelInactive()
    }

    private var dialledID: KDEConnectDeviceID? {
        if case .dialled(let heard) = role { heard.deviceID } else { nil }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        fail(context.channel, "\(error)")
    }

    private func fail(_ channel: Channel, _ why: String) {
        let device: KDEConnectDeviceID?
        switch phase {
        case .closing: return
        case .plainIdentity: device = nil
        case .handshake(let plain), .secureIdentity(let plain, _, _): device = plain.deviceID
        case .linked(let id): device = id
        }
        phase = .closing
        events.send(.refused(number, device, why))
        // Read nothing more: TLS's close waits for the peer's close_notify (at most its
        // shutdown timeout), and a peer that keeps sending must not keep us reading.
        channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in channel.close(promise: nil) }
    }

    /// KDE numbers packets by the time in milliseconds.
    static func packetID() -> Int64 {
        let now = SystemClock.now()
        return now.seconds &* 1000 &+ Int64(now.nanoseconds / 1_000_000)
    }
}

/// A link that is up: TLS done, the device's identity read and checked.
struct LinkUp: @unchecked Sendable {
    let number: Int
    let channel: Channel
    let identity: KDEConnectIdentity
    /// Its certificate's DER: pinned when it pairs.
    let certificate: [UInt8]
    let address: String?
    let dialled: Bool
    let limit: LineLimit
}
