import HandoffCore
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore

typealias AppStreamChannel = NIOAsyncChannel<StreamFrame, StreamFrame>

/// An app's end of a continuation stream: its control-socket connection after the HTTP
/// upgrade. The connection's own task lends it to whoever relays the stream and waits
/// on `finished`, so the connection stays open exactly as long as the relay runs.
struct AppStreamEnd: Sendable {
    let inbound: NIOAsyncChannelInboundStream<StreamFrame>
    let outbound: NIOAsyncChannelOutboundWriter<StreamFrame>
    let channel: Channel
    /// What the owner announced it will send (`Handoff-Stream-Length`), if anything.
    let length: Int64?
    let finished: EventLoopPromise<Void>
    /// The continuing side's file, when the app asked handoffd to write into it: the
    /// peer's data goes there, and the app hears `written` frames instead of `data`.
    var sink: StreamFileSink? = nil
    /// The origin app's source and sink, when it handed them over (§15.8): handoffd then
    /// moves the bytes itself, and the connection carries only `open`, `end` and `error`.
    var handedOver: HandedOverDescriptors? = nil
    /// The most the peer may send this app (a paste: `clipboard-max-bytes`, whatever size
    /// the copy announced, or none); more fails the stream with `too_large`.
    var limit: Int64? = nil
}

extension NIOAsyncChannel.Configuration where Inbound == StreamFrame {
    /// Few frames in flight per stream: memory stays bounded whatever the size moved.
    static var stream: Self { .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 4)) }
}

/// Why a stream failed, in the local API's terms (`PeerErrorCode`).
struct StreamFailure: Error, Sendable, Equatable {
    var code: String
    var message: String

    init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ e: HandoffError) { self.init(e.code, e.message) }

    /// From a peer's code.
    init(wire code: String, _ message: String) { self.init(PeerErrorCode.local(code), message) }

    var wireCode: String { PeerErrorCode.wire(code) }

    var frame: StreamFrame { .error(code: code, message: message) }
    var peerFrame: PeerMessage { .stream(.error(code: wireCode, message: message)) }
}

/// Stream channels move bulk data: bigger write buffers than the control API's defaults,
/// so a fast link is not throttled by 64 KiB of buffer.
enum StreamChannelTuning {
    static let writeWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 128 * 1024, high: 512 * 1024)

    /// Reads of up to 256 KiB, two per wake-up: what the reads of one wake-up bring in is
    /// what can pile up before backpressure stops the next, so this bounds memory per
    /// stream (1 MiB reads, four per wake-up, were 10% faster and held 15 MB more).
    static func apply(to channel: Channel) {
        channel.setOption(ChannelOptions.writeBufferWaterMark, value: writeWaterMark).whenFailure { _ in }
        channel.setOption(ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 4096, initial: 65536, maximum: 262_144)).whenFailure { _ in }
        channel.setOption(ChannelOptions.maxMessagesPerRead, value: 2).whenFailure { _ in }
    }
}
