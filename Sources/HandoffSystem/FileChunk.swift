import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// A failed read(2): its errno, worded by the caller.
public struct ReadFailure: Error, Sendable {
    public let errno: Int32
    public var reason: String { String(cString: strerror(errno)) }
}

extension ByteBuffer {
    /// Up to `count` bytes read from `fd` into a new buffer; empty at end of file. Blocks
    /// as the descriptor does: callers choose the thread. Stream files (handoffd) and
    /// `--stream-to`/`--stream-from` files (handoffctl) both read through here.
    public static func readChunk(from fd: CInt, upTo count: Int, allocator: ByteBufferAllocator = ByteBufferAllocator()) throws -> ByteBuffer {
        var buffer = allocator.buffer(capacity: count)
        _ = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw -> Int in
            while true {
                let n = read(fd, raw.baseAddress, count)
                if n >= 0 { return n }
                if errno != EINTR { throw ReadFailure(errno: errno) }
            }
        }
        return buffer
    }
}

/// A failed write(2): its errno, worded by the caller.
public struct WriteFailure: Error, Sendable {
    public let errno: Int32
    public var reason: String { String(cString: strerror(errno)) }
}

/// Writes all of `bytes` to `fd`, going on after short writes and EINTR. Blocks as the
/// descriptor does: callers choose the thread. A write that makes no progress is EIO.
public func writeAll(_ fd: CInt, _ bytes: UnsafeRawBufferPointer) throws(WriteFailure) {
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            throw WriteFailure(errno: errno)
        }
        if n == 0 { throw WriteFailure(errno: EIO) }
        offset += n
    }
}
