import NIOCore
import HandoffStreamFrames

/// Splits the TLS byte stream into frames: a 4-byte big-endian length, then that many
/// bytes. A length over `maximumFrameBytes` (or zero) is refused before anything is
/// buffered, so a peer cannot make us hold more than one frame's cap.
public struct PeerFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = PeerMessage

    public let maximumFrameBytes: Int
    private var cursor = StreamDataCursor()

    public init(maximumFrameBytes: Int) { self.maximumFrameBytes = maximumFrameBytes }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if cursor.remaining == 0 {
            guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
            try StreamFrameDecoder.checkLength(length, maximumFrameBytes)
        }
        // A stream's data goes on as it arrives (StreamDataCursor); everything else whole.
        switch try cursor.step(&buffer) {
        case .data(let bytes):
            context.fireChannelRead(wrapInboundOut(.stream(.data(bytes))))
            return .continue
        case .started:
            return .continue
        case .needMoreData:
            return .needMoreData
        case .notData:
            break
        }
        let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self)!
        guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        // Stream frames (continuation stream connections) skip the property-list path:
        // their data is passed on as a slice of what was read, not copied.
        if let type = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self), StreamFrame.isPeerStreamType(type) {
            buffer.moveReaderIndex(forwardBy: 1)
            let body = buffer.readSlice(length: Int(length) - 1)!
            context.fireChannelRead(wrapInboundOut(.stream(try StreamFrame.decode(type: type, body: body))))
            return .continue
        }
        let bytes = buffer.readBytes(length: Int(length))!
        context.fireChannelRead(wrapInboundOut(try PeerMessageCoding.decode(bytes)))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// Writes peer frames. A stream's data payload goes out as its own buffer, not copied.
public final class PeerFrameEncoder: ChannelOutboundHandler, RemovableChannelHandler {
    public typealias OutboundIn = PeerMessage
    public typealias OutboundOut = ByteBuffer

    public init() {}

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let message = unwrapOutboundIn(data)
        if case .stream(let frame) = message {
            var header = context.channel.allocator.buffer(capacity: 16)
            if let payload = frame.encode(header: &header) {
                context.write(wrapOutboundOut(header), promise: nil)
                context.write(wrapOutboundOut(payload), promise: promise)
            } else {
                context.write(wrapOutboundOut(header), promise: promise)
            }
            return
        }
        let bytes = PeerMessageCoding.encode(message)
        var out = context.channel.allocator.buffer(capacity: 4 + bytes.count)
        out.writeInteger(UInt32(bytes.count))
        out.writeBytes(bytes)
        context.write(wrapOutboundOut(out), promise: promise)
    }
}
