import CHandoffSystem
#if canImport(Glibc)
import Glibc
#endif

/// Open files handed from one process to another over a Unix socket (SCM_RIGHTS): how an
/// app gives handoffd the two ends of a continuation stream, so the stream's bytes need not
/// pass through the app (Docs/LocalAPI.md §15.8).
public enum DescriptorPassing {
    /// The most descriptors one message may carry.
    public static let maximumDescriptors = Int(HANDOFF_MAX_PASSED_FDS)

    /// The descriptor socket beside a control socket: `handoffd.sock` → `handoffd-fds.sock`
    /// (a name not ending in `.sock` gets `-fds` appended).
    public static func socketPath(besideControlSocket control: String) -> String {
        control.hasSuffix(".sock") ? String(control.dropLast(5)) + "-fds.sock" : control + "-fds"
    }

    /// Sends `bytes` (not empty) with `descriptors` in one message; they stay open here too.
    public static func send(_ bytes: [UInt8], descriptors: [CInt], on socket: CInt) throws(SystemCallError) {
        precondition(!bytes.isEmpty && descriptors.count <= maximumDescriptors)
        let sent = bytes.withUnsafeBytes { body in
            descriptors.withUnsafeBufferPointer { fds in
                handoff_send_fds(socket, body.baseAddress, body.count, fds.baseAddress, CInt(fds.count))
            }
        }
        guard sent >= 0 else { throw SystemCallError(call: "sendmsg", errno: CInt(-sent)) }
        guard sent == bytes.count else { throw SystemCallError(call: "sendmsg", errno: EMSGSIZE) }
    }

    public struct Received: Sendable {
        public var bytes: [UInt8]
        /// Open, close-on-exec, now the caller's to close.
        public var descriptors: [CInt]
        /// More descriptors came than were taken, or the kernel dropped some: those are closed.
        public var droppedDescriptors: Bool
    }

    /// Receives one message of at most `capacity` bytes with up to `maximumDescriptors`.
    public static func receive(on socket: CInt, capacity: Int) throws(SystemCallError) -> Received {
        var bytes = [UInt8](repeating: 0, count: capacity)
        var fds = [CInt](repeating: -1, count: maximumDescriptors)
        var count: CInt = 0
        var dropped: CInt = 0
        let n = bytes.withUnsafeMutableBytes { body in
            fds.withUnsafeMutableBufferPointer { out in
                handoff_recv_fds(socket, body.baseAddress, body.count, out.baseAddress, CInt(out.count), &count, &dropped)
            }
        }
        guard n >= 0 else { throw SystemCallError(call: "recvmsg", errno: CInt(-n)) }
        bytes.removeSubrange(Int(n)...)
        return Received(bytes: bytes, descriptors: Array(fds.prefix(Int(count))), droppedDescriptors: dropped != 0)
    }
}

/// A failed system call and its errno, with the C library's words for it.
public struct SystemCallError: Error, Sendable, CustomStringConvertible {
    public let call: String
    public let errno: CInt
    public init(call: String, errno: CInt) {
        self.call = call
        self.errno = errno
    }
    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}
