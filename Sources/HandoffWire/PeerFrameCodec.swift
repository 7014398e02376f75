import NIOCore

/// Splits the TLS byte stream into frames: a 4-byte big-endian length, then that many
/// bytes. A length over `maximumFrameBytes` (or zero) is refused before anything is
/// buffered, so a peer cannot make us hold more than one frame's cap.
public struct PeerFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = PeerMessage

    public let maximumFrameBytes: Int

    public init(maximumFrameBytes: Int) { self.maximumFrameBytes = maximumFrameBytes }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        guard length > 0, Int(length) <= maximumFrameBytes else {
            throw PeerProtocolError(code: "frame-too-large", message: "a frame of \(length) bytes exceeds the \(maximumFrameBytes)-byte cap")
        }
        guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        let bytes = buffer.readBytes(length: Int(length))!
        context.fireChannelRead(wrapInboundOut(try PeerMessageCoding.decode(bytes)))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

public struct PeerFrameEncoder: MessageToByteEncoder {
    public typealias OutboundIn = PeerMessage

    public init() {}

    public func encode(data: PeerMessage, out: inout ByteBuffer) throws {
        let bytes = PeerMessageCoding.encode(data)
        out.writeInteger(UInt32(bytes.count))
        out.writeBytes(bytes)
    }
}
