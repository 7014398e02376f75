import HandoffCore
import HandoffControlAPI
import HandoffPeerProtocol
import Logging
import NIOCore

/// The clipboard's bytes over stream connections (Docs/PeerProtocol.md §19): a paste here
/// reads them from the peer the copy was made on, and a peer's paste of our copy reads
/// them from the app that holds it, or from handoffd. What the newest copy is, and who
/// holds it, is `ClipboardService`'s.
extension PeerStreamService {
    // MARK: - Pasting here

    /// A paste here (`POST /v1/clipboard/paste`): the bytes of the newest copy in one
    /// format, from the peer it was copied on (a stream), or from handoffd's own bytes.
    nonisolated func pasteClipboard(id: ClipboardID?, type: String?, app: AppStreamEnd) async {
        let target: ClipboardTable.PasteTarget
        switch await clipboard.pasteTarget(id: id, type: type) {
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
            app.limit = min(format.size ?? .max, clipboard.settings.maximumFormatBytes)
            await relayStream(to: link, asking: .clipboardOpen(id: clip, type: format.type),
                              open: ["clipboardID": .string(clip.rawValue), "type": .string(format.type)], subject: ("clipboard", clip.rawValue), app: app)
        case .local(.bytes(let bytes), let format, let clip):
            await HeldBytesPaste.run(bytes, open: ["clipboardID": .string(clip.rawValue), "type": .string(format.type),
                                                         "device": .object(["id": .string(own.description), "name": .string(deviceName)]),
                                                         "length": .integer(Int64(bytes.count))], app: app)
        case .local(.session, _, _):
            await tell(app, StreamFailure("local_clipboard", "the newest copy was made on this workstation by an app that still holds it; paste it here as usual"))
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
        switch await clipboard.source(clip, type: type) {
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
            switch await broker.askOwner(session: token, event: { .clipboardRequested(clipboardID: clip, type: type, streamID: $0, device: device) }) {
            case .failure(let f): return await refuse(f)
            case .success(let app):
                return await relayFromOwner(app, open: ["clipboardID": .string(clip.rawValue), "type": .string(type)], device: device,
                                            subject: ("clipboard", clip.rawValue), messages: &messages, outbound: outbound, channel: channel, state: state)
            }
        }
    }
}
