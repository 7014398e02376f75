import HandoffCore
import HandoffControlAPI
import HandoffStreamFrames
import NIOCore

/// `POST /v1/clipboard/copy?type=T` after the upgrade (`handoffctl copy`): handoffd says
/// `open` (`{"type", "maximumBytes"}`), the app sends its bytes as data frames and `end`;
/// handoffd keeps them (at most `clipboard-held-max-bytes`) as this workstation's copy and
/// answers with the copy's record as JSON in its direction's data, then `end`. Nothing is
/// copied unless the app's `end` came.
enum ClipboardCopy {
    static func run(type: String, inbound: NIOAsyncChannelInboundStream<StreamFrame>, outbound: NIOAsyncChannelOutboundWriter<StreamFrame>,
                    channel: Channel, clipboard: ClipboardService) async {
        let cap = clipboard.settings.maximumHeldBytes
        var bytes: [UInt8] = []
        var ended = false
        do {
            try await outbound.write(.open(["type": .string(type), "maximumBytes": .integer(Int64(cap))]))
            reading: for try await frame in inbound {
                switch frame {
                case .data(let chunk):
                    guard bytes.count + chunk.readableBytes <= cap else {
                        await StreamRelay.refuse(StreamFailure("too_large", "handoffd keeps at most \(cap) bytes copied this way (clipboard-held-max-bytes); copy less, or from an app"), on: channel)
                        return
                    }
                    bytes += chunk.readableBytesView
                case .end:
                    ended = true
                    break reading
                case .error:
                    channel.close(promise: nil)
                    return
                case .open, .written:
                    await StreamRelay.refuse(StreamFailure("protocol", "an app sends only data, end and error frames"), on: channel)
                    return
                }
            }
        } catch {
            await StreamRelay.refuse(StreamFailure("protocol", "the copy's frames broke the stream's rules: \(error)"), on: channel)
            return
        }
        guard ended else { return }  // closed before its end: an abort, nothing copied
        do {
            let record = try await clipboard.copyHeld(bytes, type: type)
            try await outbound.write(.data(ByteBuffer(bytes: record.json.serializedBytes())))
            try await channel.writeAndFlush(StreamFrame.end).get()
            // Until the app has read it and closed (at most 2 s).
            await StreamRelay.closeAfterError(channel)
        } catch let e as HandoffError {
            await StreamRelay.refuse(StreamFailure(e), on: channel)
        } catch {
            channel.close(promise: nil)
        }
    }
}
