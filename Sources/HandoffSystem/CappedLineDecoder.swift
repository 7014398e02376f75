import NIOCore

/// Lines (without their newline) of at most `limit.bytes`; a longer one is an error that
/// closes the connection instead of growing a buffer. The scan resumes where it stopped,
/// so a long line arriving in small pieces is read once, not once per piece. The limit
/// may change while the connection lives (KDE Connect raises it once a device is paired).
public struct CappedLineDecoder: ByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    public let limit: LineLimit
    private var scanned = 0

    public init(limit: LineLimit) { self.limit = limit }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        if let newline = view.dropFirst(scanned).firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - view.startIndex
            guard length <= limit.bytes else { throw LineTooLong(bytes: length, limit: limit.bytes) }
            let line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            scanned = 0
            context.fireChannelRead(wrapInboundOut(line))
            return .continue
        }
        scanned = view.count
        guard view.count <= limit.bytes else { throw LineTooLong(bytes: view.count, limit: limit.bytes) }
        return .needMoreData
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// The line limit of one connection. Touched only on the connection's event loop.
public final class LineLimit: @unchecked Sendable {
    public var bytes: Int
    public init(_ bytes: Int) { self.bytes = bytes }
}

public struct LineTooLong: Error, CustomStringConvertible {
    public var bytes: Int
    public var limit: Int
    public var description: String { "a line of \(bytes) bytes or more, over the \(limit) allowed" }
}
