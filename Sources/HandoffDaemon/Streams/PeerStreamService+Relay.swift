import HandoffCore
import HandoffPeerProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// Continuation streams between daemons. Each stream is its own TLS connection to the
/// origin's peer port (same pinning, same caps), so bulk data never delays the link's
/// offers and fetches: hello with purpose `stream`, `streamOpen`, then `streamAccepted`
/// or an error, then stream frames both ways (Docs/PeerProtocol.md).
extension PeerStreamService {
    // MARK: - Continuing side

    /// An app here opened a stream to an activity continued from another workstation:
    /// dial the origin, ask, and relay. Every failure reaches the app as an error frame.
    /// `link`: to the workstation it was continued from, or else to one that offers it;
    /// `continuedFrom`: where it was continued from, linked or not.
    nonisolated func continueStream(_ id: ActivityID, document: Bool = false, app: AppStreamEnd, link: (any LinkEnd)?, continuedFrom: DeviceID?) async {
        guard let link else {
            // Continued from what was kept for a workstation that sleeps: its streams wait for it.
            if let origin = continuedFrom {
                let name = await keeping.device(origin).name
                await tell(app, StreamFailure("origin_unreachable", "continuation streams come from the workstation the activity was offered on (\(name.isEmpty ? origin.shortID : name)), which is not connected: wake it, then try again"))
                return
            }
            await tell(app, StreamFailure("not_offered", "no connected workstation offers activity \(id); continue it first (`handoffctl continue`)"))
            return
        }
        await relayStream(to: link, asking: .streamOpen(activityID: id, document: document), open: ["activityID": .string(id.rawValue)],
                          subject: ("activity", id.rawValue), app: app)
    }

    /// Dials `link`'s peer for a stream, asks for it with `first` (`streamOpen` or
    /// `clipboardOpen`), and once the origin took it tells the app (`open`, with `open`'s
    /// fields, the device and the length) and relays until both directions end. Every
    /// failure reaches the app as an error frame.
    nonisolated func relayStream(to link: any LinkEnd, asking first: PeerMessage, open fields: JSONObject, subject: (String, String), app: AppStreamEnd) async {
        guard let address = link.streamAddress else {
            await tell(app, StreamFailure("peer_unreachable", "\(link.deviceName) did not say where it accepts streams"))
            return
        }
        guard await beginStream(link.deviceID, outgoing: true) else {
            await tell(app, StreamFailure("busy", "\(maximumStreamsPerPeer) streams with \(link.deviceName) are open already; wait for one to end"))
            return
        }
        let started = NIODeadline.now()
        let state = StreamRelay.State()
        var failure: StreamFailure?
        do {
            // On the app connection's event loop: the relay then moves frames between two
            // channels of one thread, with no hop between loops.
            let channel = try await dialStream(address, expecting: link.deviceID, on: app.channel.eventLoop)
            failure = try await channel.executeThenClose { inbound, outbound in
                var messages = inbound.makeAsyncIterator()
                let ourPort = await listenPort
                try await outbound.write(.hello(PeerHello(deviceName: deviceName, purpose: .stream, listenPort: UInt16(exactly: ourPort))))
                guard case .hello(let hello)? = try await messages.next(),
                      case .compatible = hello.compatibility(with: PeerHello(deviceName: deviceName)) else {
                    return StreamFailure("peer_unreachable", "\(link.deviceName) did not answer as a compatible handoff peer")
                }
                // Authenticated (TLS pinned, hello done): the handshake deadline is over. (Gone
                // already if the origin refused and closed at once: its answer is read below.)
                try? await channel.channel.pipeline.removeHandler(name: PreAuthenticationDeadline.name).get()
                try? await outbound.write(first)
                // The origin answers within its owner's deadline; this bounds an origin
                // that says nothing at all.
                let peerChannel = channel.channel
                let guardTimer = peerChannel.eventLoop.scheduleTask(in: broker.acceptTimeout + Self.streamAnswerMargin) {
                    peerChannel.close(promise: nil)
                }
                let answer = try? await messages.next()
                guardTimer.cancel()
                let length: Int64?
                switch answer {
                case .streamAccepted(let l)?:
                    length = l
                case .error(let code, let message)?:
                    return StreamFailure(wire: code, message)
                case nil:
                    return StreamFailure("stream_timeout", "\(link.deviceName) did not answer the stream request in time")
                default:
                    return StreamFailure("protocol", "\(link.deviceName) answered the stream request with something else")
                }
                var open = fields
                open["device"] = PeerDevice(id: link.deviceID.description, name: link.deviceName).json
                open["length"] = length.map { .integer($0) } ?? .null
                try await app.outbound.write(.open(open))
                var meta: Logger.Metadata = ["side": "continuing", "peer": "\(link.deviceName)", "\(subject.0)": "\(subject.1)"]
                if let sink = app.sink { meta["into"] = "\(sink.path)" }
                logger.info("continuation stream opened", metadata: meta)
                return await StreamRelay.run(app: app, peerMessages: &messages, peerOut: outbound, peerChannel: peerChannel,
                                             peerName: link.deviceName, state: state)
            }
        } catch {
            failure = StreamFailure("peer_unreachable", "could not open a stream to \(link.deviceName): \(error)")
        }
        if let failure, state.failure == nil { await tell(app, failure) }
        await endStream(link.deviceID, outgoing: true)
        logStream("continuing", subject: subject, peer: link.deviceName, started: started, state: state, failure: failure)
    }

    /// An error frame to an app whose stream could not start, flushed before it closes.
    nonisolated func tell(_ app: AppStreamEnd, _ failure: StreamFailure) async {
        await StreamRelay.refuse(failure, on: app.channel)
    }

    nonisolated private func dialStream(_ target: SocketAddress, expecting peer: DeviceID, on loop: EventLoop) async throws -> PeerChannel {
        let trust = self.trust
        // Only the device the link is with: an address now used by another trusted device is refused.
        return try await dialer.connect(target, on: loop, isTrusted: { $0 == peer && trust.isTrusted($0) },
                                     configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 4)), tuneForBulk: true)
    }

    // MARK: - Origin side

    /// A trusted peer's stream connection, after the hellos: which activity, who serves it
    /// (its app, or a file), then the relay.
    nonisolated func serveStream(from peerID: DeviceID, hello: PeerHello, messages: inout StreamRelay.PeerMessages,
                                 outbound: NIOAsyncChannelOutboundWriter<PeerMessage>, channel: Channel) async {
        let peerName = trust.entry(peerID)?.name.nonEmpty ?? hello.deviceName
        StreamChannelTuning.apply(to: channel)
        let started = NIODeadline.now()
        let state = StreamRelay.State()
        var subject = ("activity", "?")
        var counted = false
        let failure = await originStream(peerID: peerID, peerName: peerName, messages: &messages, outbound: outbound,
                                         channel: channel, state: state, subject: &subject, counted: &counted)
        if counted { await endStream(peerID, outgoing: false) }
        logStream("origin", subject: subject, peer: peerName, started: started, state: state, failure: failure)
    }

    nonisolated private func originStream(peerID: DeviceID, peerName: String, messages: inout StreamRelay.PeerMessages,
                                          outbound: NIOAsyncChannelOutboundWriter<PeerMessage>, channel: Channel,
                                          state: StreamRelay.State, subject: inout (String, String), counted: inout Bool) async -> StreamFailure? {
        func refuse(_ f: StreamFailure) async -> StreamFailure {
            try? await outbound.write(.error(code: f.wireCode, message: f.message))
            return f
        }
        let timer = channel.eventLoop.scheduleTask(in: Self.streamOpenTimeout) { channel.close(promise: nil) }
        let first = try? await messages.next()
        timer.cancel()
        let id: ActivityID, document: Bool
        switch first {
        case .streamOpen(let i, let d)?:
            (id, document) = (i, d)
            subject = ("activity", id.rawValue)
        case .clipboardOpen(let clip, let type)?:
            subject = ("clipboard", clip.rawValue)
            guard await beginStream(peerID, outgoing: false) else {
                return await refuse(StreamFailure("busy", "\(maximumStreamsPerPeer) streams from you are open already; wait for one to end"))
            }
            counted = true
            return await originClipboard(clip, type: type, peerID: peerID, peerName: peerName, messages: &messages, outbound: outbound,
                                         channel: channel, state: state)
        default:
            return await refuse(StreamFailure("protocol", "a stream connection must start with streamOpen or clipboardOpen"))
        }
        // Counted only now, after streamOpen: a refusal then always reaches the peer as
        // an answer to what it asked, not as a connection closed under its request.
        guard await beginStream(peerID, outgoing: false) else {
            return await refuse(StreamFailure("busy", "\(maximumStreamsPerPeer) streams from you are open already; wait for one to end"))
        }
        counted = true
        let source: StreamSource
        do { source = try await registry.streamSource(for: id, document: document, peer: peerID) } catch {
            return await refuse(StreamFailure(error))
        }
        switch source {
        case .file(let path), .document(let path):
            let opened: (fd: CInt, size: Int64)
            do { opened = try StreamFileServer.open(path, followLinks: source == .file(path)) } catch { return await refuse(error) }
            do { try await outbound.write(.streamAccepted(length: opened.size)) } catch {
                close(opened.fd)
                return StreamFailure("peer_gone", "\(peerName) went away")
            }
            logger.info("continuation stream opened", metadata: ["side": "origin", "peer": "\(peerName)", "activity": "\(id)", "source": "file"])
            return await StreamFileServer.run(fd: opened.fd, path: path, peerMessages: &messages, peerOut: outbound,
                                              peerChannel: channel, peerName: peerName, state: state)
        case .session(let token):
            let device = PeerDevice(id: peerID.description, name: peerName)
            // The peer may give up while the owner decides: notice it, and stop waiting.
            switch await broker.askOwner(activityID: id, session: token, device: device) {
            case .failure(let f): return await refuse(f)
            case .success(let app):
                return await relayFromOwner(app, open: ["activityID": .string(id.rawValue)], device: device, subject: subject,
                                            messages: &messages, outbound: outbound, channel: channel, state: state)
            }
        }
    }

    /// The origin's owner took the stream: tell the peer (its length) and the owner
    /// (`open`), then relay, or move the bytes of the descriptors it handed over.
    nonisolated func relayFromOwner(_ app: AppStreamEnd, open fields: JSONObject, device: PeerDevice, subject: (String, String),
                                    messages: inout StreamRelay.PeerMessages, outbound: NIOAsyncChannelOutboundWriter<PeerMessage>,
                                    channel: Channel, state: StreamRelay.State) async -> StreamFailure? {
        defer { app.finished.succeed() }
        do {
            try await outbound.write(.streamAccepted(length: app.length))
            var open = fields
            open["device"] = device.json
            open["length"] = app.length.map { .integer($0) } ?? .null
            try await app.outbound.write(.open(open))
            logger.info("continuation stream opened", metadata: ["side": "origin", "peer": "\(device.name)", "\(subject.0)": "\(subject.1)",
                                                                 "source": "\(app.handedOver == nil ? "app" : "app's descriptors")"])
        } catch {
            app.handedOver?.close()
            let f = StreamFailure("peer_gone", "\(device.name) went away before the stream started")
            await tell(app, f)
            return f
        }
        if let handedOver = app.handedOver {
            return await HandedOverRelay.run(app: app, descriptors: handedOver, peerMessages: &messages, peerOut: outbound,
                                             peerChannel: channel, peerName: device.name, state: state)
        }
        return await StreamRelay.run(app: app, peerMessages: &messages, peerOut: outbound, peerChannel: channel,
                                     peerName: device.name, state: state)
    }

    nonisolated func logStream(_ side: String, subject: (String, String), peer: String, started: NIODeadline, state: StreamRelay.State, failure: StreamFailure?) {
        let seconds = Double((NIODeadline.now() - started).nanoseconds) / 1e9
        let counts = state.counts
        var meta: Logger.Metadata = [
            "side": "\(side)", "peer": "\(peer)", "\(subject.0)": "\(subject.1)",
            "sent": "\(counts.toPeer)", "received": "\(counts.toApp)", "seconds": "\((seconds * 1000).rounded() / 1000)",
        ]
        if let failure {
            meta["error"] = "\(failure.code): \(failure.message)"
            logger.info("continuation stream failed", metadata: meta)
        } else {
            logger.info("continuation stream ended", metadata: meta)
        }
    }
}
