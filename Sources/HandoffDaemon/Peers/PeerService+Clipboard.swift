import HandoffCore
import HandoffControlAPI
import HandoffPeerProtocol
import Logging
import NIOCore

/// The clipboard across the account (Docs/PeerProtocol.md §19, LocalAPI.md §23): a copy
/// here is announced to linked peers as formats and sizes, never bytes; a paste on a peer
/// asks for one format over a stream connection, and only then do the bytes leave. The
/// decisions are `ClipboardTable`'s; this performs them.
extension PeerService {
    static let clipboardOff = HandoffError(.conflict, code: "clipboard_off",
                                           message: "the clipboard is turned off on this workstation (clipboard = no in handoffd.conf)")

    // MARK: - Local API

    func clipboardRecord() -> ClipboardRecord? { clipboard.record(at: clock.now()) }

    /// An app copied and will serve the bytes itself when asked (`clipboard-requested`).
    func announceClipboard(_ formats: [ClipboardFormat], session: String) async throws(HandoffError) -> ClipboardRecord {
        guard settings.clipboard else { throw Self.clipboardOff }
        guard await registry.isSessionOpen(session) else { throw HandoffError.unknownSession(session) }
        return try copy(formats, holder: .session(session))
    }

    /// Bytes copied with the request (`handoffctl copy`): handoffd keeps and serves them.
    func copyHeld(_ bytes: [UInt8], type: String) throws(HandoffError) -> ClipboardRecord {
        guard settings.clipboard else { throw Self.clipboardOff }
        return try copy([ClipboardFormat(type: type, size: Int64(bytes.count))], holder: .bytes(bytes))
    }

    private func copy(_ formats: [ClipboardFormat], holder: ClipboardHolder) throws(HandoffError) -> ClipboardRecord {
        let now = clock.now()
        let actions: [ClipboardTable.Action]
        do {
            (_, actions) = try clipboard.copy(formats, holder: holder, device: PeerDevice(id: identity.deviceID.description, name: deviceName), at: now)
        } catch {
            throw HandoffError(.invalid, code: error.code, message: error.message)
        }
        performClipboard(actions)
        logger.info("copied", metadata: ["formats": "\(formats.map { "\($0.type) (\($0.size.map { "\($0) B" } ?? "size not known"))" }.joined(separator: ", "))",
                                         "held": "\(holder.isBytes ? "by handoffd" : "by an app")"])
        return clipboard.record(at: now)!
    }

    /// Our copy is withdrawn (cleared, or the app's clipboard changed to something not to
    /// share); with `id`, only if that is still our copy. The newest copy afterwards.
    func withdrawClipboard(_ id: ClipboardID? = nil) -> ClipboardRecord? {
        let now = clock.now()
        performClipboard(clipboard.withdraw(id, at: now))
        return clipboard.record(at: now)
    }

    // MARK: - Links

    /// A version 3 peer subscribed: it hears our copy, if we have one.
    func sendClipboard(to link: PeerLink) {
        guard settings.clipboard, link.version >= 3, let offer = clipboard.ourOffer(at: clock.now()) else { return }
        link.send(.clipboard(offer))
    }

    func heardClipboard(_ offer: ClipboardOffer?, from link: PeerLink) {
        guard settings.clipboard else { return }
        let (actions, dropped) = clipboard.received(offer, from: link.deviceID, device: link.device, at: clock.now())
        let left = (offer?.droppedFormats ?? 0) + dropped
        if left > 0 {
            logger.notice("left out formats of a peer's copy", metadata: ["peer": "\(link.deviceName)", "formats": "\(left)",
                                                                          "why": "malformed, repeated, beyond \(ClipboardOffer.maximumFormats), or over clipboard-max-bytes"])
        }
        performClipboard(actions)
    }

    func clipboardLinkEnded(_ link: PeerLink) {
        performClipboard(clipboard.linkEnded(link.deviceID, at: clock.now()))
    }

    func clipboardSessionEnded(_ token: String) {
        performClipboard(clipboard.sessionEnded(token, at: clock.now()))
    }

    private func expireClipboard() {
        clipboardTimer = nil
        performClipboard(clipboard.expire(at: clock.now()))
    }

    func performClipboard(_ actions: [ClipboardTable.Action]) {
        for action in actions {
            switch action {
            case .announce(let offer):
                for link in links.values where link.version >= 3 { link.send(.clipboard(offer)) }
            case .emit(let record):
                peerEvents.yield(.clipboard(record))
            }
        }
        // One timer, for the newest copy's end.
        clipboardTimer?.cancel()
        clipboardTimer = nil
        if let due = clipboard.nextExpiry {
            let wait = max(0, clock.now().nanoseconds(until: due))
            clipboardTimer = timers.schedule(in: .nanoseconds(wait)) { Task { await self.expireClipboard() } }
        }
    }

    // MARK: - Pasting here

    /// A paste here (`POST /v1/clipboard/paste`): the bytes of the newest copy in one
    /// format, from the peer it was copied on (a stream), or from handoffd's own bytes.
    nonisolated func pasteClipboard(id: ClipboardID?, type: String?, app: AppStreamEnd) async {
        let target: ClipboardTable.PasteTarget
        switch await pasteTarget(id: id, type: type) {
        case .failure(let f):
            await tell(app, f)
            return
        case .success(let t): target = t
        }
        switch target {
        case .peer(let origin, let clip, let format):
            guard let link = await links[origin], link.version >= 3 else {
                await tell(app, StreamFailure("peer_unreachable", "the workstation the copy was made on is not connected any more"))
                return
            }
            var app = app
            app.limit = min(format.size ?? .max, settings.clipboardMaximumFormatBytes)
            await relayStream(to: link, asking: .clipboardOpen(id: clip, type: format.type),
                              open: ["clipboardID": .string(clip.rawValue), "type": .string(format.type)], subject: ("clipboard", clip.rawValue), app: app)
        case .local(.bytes(let bytes), let format, let clip):
            await HeldBytesPaste.run(bytes, open: ["clipboardID": .string(clip.rawValue), "type": .string(format.type),
                                                         "device": .object(["id": .string(identity.deviceID.description), "name": .string(deviceName)]),
                                                         "length": .integer(Int64(bytes.count))], app: app)
        case .local(.session, _, _):
            await tell(app, StreamFailure("local_clipboard", "the newest copy was made on this workstation by an app that still holds it; paste it here as usual"))
        }
    }

    private func pasteTarget(id: ClipboardID?, type: String?) -> Result<ClipboardTable.PasteTarget, StreamFailure> {
        guard settings.clipboard else { return .failure(StreamFailure(Self.clipboardOff)) }
        do { return .success(try clipboard.pasteTarget(id: id, type: type, at: clock.now())) } catch {
            return .failure(StreamFailure(error.code, error.message))
        }
    }

    // MARK: - A peer pastes our copy

    /// A peer's `clipboardOpen`: our copy's bytes in one format, from the app that holds
    /// it (asked with `clipboard-requested`) or from handoffd's own bytes.
    nonisolated func originClipboard(_ clip: ClipboardID, type: String, peerID: DeviceID, peerName: String, messages: inout StreamRelay.PeerMessages,
                                     outbound: NIOAsyncChannelOutboundWriter<PeerMessage>, channel: Channel, state: StreamRelay.State) async -> StreamFailure? {
        func refuse(_ f: StreamFailure) async -> StreamFailure {
            try? await outbound.write(.error(code: f.wireCode, message: f.message))
            return f
        }
        let holder: ClipboardHolder
        switch await clipboardSource(clip, type: type) {
        case .failure(let f): return await refuse(f)
        case .success(let h): holder = h
        }
        let device = PeerDevice(id: peerID.description, name: peerName)
        switch holder {
        case .bytes(let bytes):
            do { try await outbound.write(.streamAccepted(length: Int64(bytes.count))) } catch {
                return StreamFailure("peer_gone", "\(peerName) went away")
            }
            logger.info("continuation stream opened", metadata: ["side": "origin", "peer": "\(peerName)", "clipboard": "\(clip)", "source": "handoffd"])
            return await StreamFileServer.run(bytes: bytes, peerMessages: &messages, peerOut: outbound, peerChannel: channel, peerName: peerName, state: state)
        case .session(let token):
            switch await streams.askOwner(session: token, event: { .clipboardRequested(clipboardID: clip, type: type, streamID: $0, device: device) }) {
            case .failure(let f): return await refuse(f)
            case .success(let app):
                return await relayFromOwner(app, open: ["clipboardID": .string(clip.rawValue), "type": .string(type)], device: device,
                                            subject: ("clipboard", clip.rawValue), messages: &messages, outbound: outbound, channel: channel, state: state)
            }
        }
    }

    private func clipboardSource(_ clip: ClipboardID, type: String) -> Result<ClipboardHolder, StreamFailure> {
        guard settings.clipboard else { return .failure(StreamFailure(Self.clipboardOff)) }
        do { return .success(try clipboard.source(of: clip, type: type, at: clock.now()).0) } catch {
            return .failure(StreamFailure(error.code, error.message))
        }
    }
}

extension ClipboardHolder {
    var isBytes: Bool { if case .bytes = self { true } else { false } }
}
