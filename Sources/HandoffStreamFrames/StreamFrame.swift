import HandoffCore
import NIOCore

/// One frame of a continuation stream (Docs/LocalAPI.md, Docs/PeerProtocol.md). The same
/// framing as peer messages: a 4-byte big-endian length (of type and body), a 1-byte
/// type, the body. Streams use it on the control socket after the HTTP upgrade and
/// between daemons, so a daemon relays frames without re-encoding them.
///
/// A frame's boundaries carry no meaning: relays may split or join `data`.
public enum StreamFrame: Sendable, Equatable {
    /// First frame a daemon sends an app after the upgrade: the stream is established.
    /// Control socket only (peers use `streamAccepted`).
    case open(JSONObject)
    /// Bytes of the stream.
    case data(ByteBuffer)
    /// The sender's direction is finished (half-close); the other direction goes on.
    case end
    /// The stream failed; both directions are over and the connection closes.
    case error(code: String, message: String)
    /// Bytes of the other side's direction that the daemon has written into the file the
    /// app named (`into`), so far. Control socket only, daemon to app, instead of `data`.
    case written(Int64)

    public static let dataType: UInt8 = 0x10
    public static let endType: UInt8 = 0x11
    public static let errorType: UInt8 = 0x12
    public static let openType: UInt8 = 0x13
    public static let writtenType: UInt8 = 0x14

    /// The largest `data` payload our writers produce; receivers accept up to their frame cap.
    public static let preferredDataBytes = 256 * 1024

    /// `bytes` as data frames of at most `preferredDataBytes` each, in order (PeerProtocol.md
    /// §7.10: senders keep data frames at 256 KiB or less); slices, not copies. None for no bytes.
    public static func dataFrames(of bytes: ByteBuffer) -> [StreamFrame] {
        var rest = bytes, frames: [StreamFrame] = []
        frames.reserveCapacity(bytes.readableBytes / preferredDataBytes + 1)
        while rest.readableBytes > 0 {
            frames.append(.data(rest.readSlice(length: min(rest.readableBytes, preferredDataBytes))!))
        }
        return frames
    }
    /// The default frame cap on the control socket.
    public static let maximumFrameBytes = 1 << 20

    /// Frame types of the control socket's streams.
    public static func isStreamType(_ type: UInt8) -> Bool { (0x10...0x14).contains(type) }
    /// Those a peer may send: `open` and `written` are the daemon's words to its apps.
    public static func isPeerStreamType(_ type: UInt8) -> Bool { (0x10...0x12).contains(type) }

    public var typeCode: UInt8 {
        switch self {
        case .data: Self.dataType
        case .end: Self.endType
        case .error: Self.errorType
        case .open: Self.openType
        case .written: Self.writtenType
        }
    }

    /// Writes the frame: header and small bodies into `header`; a data payload is
    /// returned separately so it can be written without a copy.
    public func encode(header: inout ByteBuffer) -> ByteBuffer? {
        switch self {
        case .data(let payload):
            header.writeInteger(UInt32(1 + payload.readableBytes))
            header.writeInteger(Self.dataType)
            return payload
        case .end:
            header.writeInteger(UInt32(1))
            header.writeInteger(Self.endType)
        case .error(let code, let message):
            Self.writeJSON(.object(["code": .string(code), "message": .string(message)]), type: Self.errorType, into: &header)
        case .open(let o):
            Self.writeJSON(.object(o), type: Self.openType, into: &header)
        case .written(let n):
            Self.writeJSON(.object(["bytes": .integer(n)]), type: Self.writtenType, into: &header)
        }
        return nil
    }

    private static func writeJSON(_ v: JSONValue, type: UInt8, into out: inout ByteBuffer) {
        let text = v.serialized()
        out.writeInteger(UInt32(1 + text.utf8.count))
        out.writeInteger(type)
        out.writeString(text)
    }

    /// Decodes a frame's body, given its type. `body` holds exactly the body.
    public static func decode(type: UInt8, body: ByteBuffer) throws(PeerProtocolError) -> StreamFrame {
        switch type {
        case dataType:
            guard body.readableBytes > 0 else { throw .malformed("an empty data frame") }
            return .data(body)
        case endType:
            guard body.readableBytes == 0 else { throw .malformed("an end frame with a body") }
            return .end
        case errorType, openType, writtenType:
            let o: JSONObject
            do {
                guard case .object(let obj) = try JSONValue(parsing: Array(body.readableBytesView)) else {
                    throw PeerProtocolError.malformed("a stream frame body must be a JSON object")
                }
                o = obj
            } catch let e as PeerProtocolError { throw e } catch { throw .malformed("stream frame: \(error)") }
            if type == openType { return .open(o) }
            if type == writtenType {
                guard case .integer(let n)? = o["bytes"], n >= 0 else { throw .malformed("a written frame needs bytes, a count") }
                return .written(n)
            }
            guard let code = o["code"]?.stringValue, let message = o["message"]?.stringValue else {
                throw .malformed("an error frame needs code and message")
            }
            return .error(code: code, message: message)
        default:
            throw .malformed("unknown stream frame type 0x\(String(type, radix: 16))")
        }
    }
}

/// Passes a data frame's payload on as it arrives, without waiting for the whole frame:
/// what one read brought in goes on as a slice of that read. Gathering whole frames made
/// the decoder copy every byte once into its buffer (and hold up to a frame per stream).
/// Frame boundaries carry no meaning, so the pieces are data frames of their own.
public struct StreamDataCursor: Sendable {
    /// Payload bytes of the current data frame still to come.
    public private(set) var remaining = 0

    public init() {}

    public enum Step {
        case data(ByteBuffer)
        /// A data frame's header was consumed; its payload follows.
        case started
        /// Not inside a data frame and no data frame starts here: decode a whole frame.
        case notData
        case needMoreData
    }

    /// Call before decoding a frame; `length` is the frame's length field once checked.
    public mutating func step(_ buffer: inout ByteBuffer) throws(PeerProtocolError) -> Step {
        if remaining > 0 {
            guard buffer.readableBytes > 0 else { return .needMoreData }
            let n = min(remaining, buffer.readableBytes)
            remaining -= n
            return .data(buffer.readSlice(length: n)!)
        }
        guard buffer.readableBytes >= 5 else { return .needMoreData }
        let length = Int(buffer.getInteger(at: buffer.readerIndex, as: UInt32.self)!)
        guard buffer.getInteger(at: buffer.readerIndex + 4, as: UInt8.self) == StreamFrame.dataType else { return .notData }
        guard length > 1 else { throw .malformed("an empty data frame") }
        buffer.moveReaderIndex(forwardBy: 5)
        remaining = length - 1
        return .started
    }
}

/// Splits bytes into stream frames (control socket side). A length over the cap, or
/// zero, is refused before anything is buffered. Data payloads are slices, not copies,
/// passed on as they arrive (`StreamDataCursor`).
public struct StreamFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = StreamFrame

    public let maximumFrameBytes: Int
    private var cursor = StreamDataCursor()

    public init(maximumFrameBytes: Int = StreamFrame.maximumFrameBytes) { self.maximumFrameBytes = maximumFrameBytes }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if cursor.remaining == 0, let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) {
            try StreamFrameDecoder.checkLength(length, maximumFrameBytes)
        }
        switch try cursor.step(&buffer) {
        case .data(let bytes):
            context.fireChannelRead(wrapInboundOut(.data(bytes)))
            return .continue
        case .started:
            return .continue
        case .needMoreData:
            return .needMoreData
        case .notData:
            guard let frame = try StreamFrameDecoder.next(&buffer, maximumFrameBytes: maximumFrameBytes) else { return .needMoreData }
            context.fireChannelRead(wrapInboundOut(frame))
            return .continue
        }
    }

    public static func checkLength(_ length: UInt32, _ maximumFrameBytes: Int) throws(PeerProtocolError) {
        guard length > 0, Int(length) <= maximumFrameBytes else {
            throw PeerProtocolError(code: "frame-too-large", message: "a frame of \(length) bytes exceeds the \(maximumFrameBytes)-byte cap")
        }
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }

    /// The next whole frame in `buffer`, or nil when more bytes are needed.
    public static func next(_ buffer: inout ByteBuffer, maximumFrameBytes: Int) throws(PeerProtocolError) -> StreamFrame? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        try checkLength(length, maximumFrameBytes)
        guard buffer.readableBytes >= 4 + Int(length) else { return nil }
        buffer.moveReaderIndex(forwardBy: 4)
        let type = buffer.readInteger(as: UInt8.self)!
        guard StreamFrame.isStreamType(type) else {
            throw PeerProtocolError.malformed("frame type 0x\(String(type, radix: 16)) is not a stream frame")
        }
        return try StreamFrame.decode(type: type, body: buffer.readSlice(length: Int(length) - 1)!)
    }
}

/// Writes stream frames; a data payload goes out as its own buffer (no copy).
public final class StreamFrameEncoder: ChannelOutboundHandler, RemovableChannelHandler {
    public typealias OutboundIn = StreamFrame
    public typealias OutboundOut = ByteBuffer

    public init() {}

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var header = context.channel.allocator.buffer(capacity: 16)
        if let payload = unwrapOutboundIn(data).encode(header: &header) {
            context.write(wrapOutboundOut(header), promise: nil)
            context.write(wrapOutboundOut(payload), promise: promise)
        } else {
            context.write(wrapOutboundOut(header), promise: promise)
        }
    }
}
