import CHandoffSystem
import Dispatch
import HandoffCore
import HandoffControlAPI
import HandoffSystem
import Logging
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// The descriptor socket (`handoffd-fds.sock`, beside the control socket): where an origin
/// app hands over a stream's source and sink (SCM_RIGHTS) before accepting the stream, so
/// handoffd moves those bytes itself (Docs/LocalAPI.md §15.8). NIO reads sockets with
/// read(2), which drops passed descriptors, so this small socket is served apart: a
/// dispatch source wakes up only when a client connects, and each client gets one
/// message, one answer and the close, with a short deadline.
final class DescriptorListener: Sendable {
    let path: String
    private let fd: CInt
    private let queue = DispatchQueue(label: "handoff.descriptors")
    /// Dispatch sources are thread-safe to cancel, though not marked Sendable.
    private struct ReadSource: @unchecked Sendable { let source: DispatchSourceRead }
    private let source: NIOLockedValueBox<ReadSource?> = .init(nil)
    /// Handovers waiting for the broker: bounded, so a flood of clients holds no more.
    private let pending = NIOLockedValueBox(0)
    static let maximumPending = 64
    /// How long a client may take to send its message once connected.
    static let clientDeadlineSeconds = 2

    private let broker: StreamBroker
    private let logger: Logger

    /// Binds the socket (mode 0600; a stale file at the path is replaced) and listens.
    init(path: String, broker: StreamBroker, logger: Logger) throws(SystemCallError) {
        self.path = path
        self.broker = broker
        self.logger = logger
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else { throw SystemCallError(call: "bind", errno: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError(call: "socket", errno: errno) }
        unlink(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // 0600 before it listens; the runtime directory (0700, the control socket's) keeps
        // everyone else out before that too. Not through umask, which is the whole process's.
        guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 64) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw SystemCallError(call: "bind", errno: e)
        }
        self.fd = fd
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [self] in acceptWaiting() }
        source.setCancelHandler { [fd] in _ = Glibc.close(fd) }
        self.source.withLockedValue { $0 = ReadSource(source: source) }
        source.resume()
    }

    /// Stops listening and removes the socket file.
    func close() {
        unlink(path)
        source.withLockedValue { s in
            s?.source.cancel()
            s = nil
        }
    }

    private func acceptWaiting() {
        while true {
            let client = handoff_accept_cloexec(fd)
            guard client >= 0 else {
                // Out of descriptors: the waiting client stays queued and the source would
                // fire again at once, so it rests a second instead of spinning.
                if client == -EMFILE || client == -ENFILE, let s = source.withLockedValue({ $0 }) {
                    s.source.suspend()
                    queue.asyncAfter(deadline: .now() + 1) { s.source.resume() }
                }
                return  // EAGAIN: none left
            }
            serve(client)
        }
    }

    /// One client: its message and descriptors, checked here; the broker decides, then
    /// the answer. The socket is blocking with a deadline, so a client that connects and
    /// says nothing holds this queue 2 s at most.
    private func serve(_ client: CInt) {
        var tv = timeval(tv_sec: Self.clientDeadlineSeconds, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        // The socket's mode keeps other users out; the kernel's word confirms it.
        guard UnixSocket.peerUID(client) == getuid() else {
            answer(client, .failure(StreamFailure("forbidden", "only handoffd's own user may hand it descriptors")))
            return
        }
        let received: DescriptorPassing.Received
        do { received = try DescriptorPassing.receive(on: client, capacity: DescriptorHandover.maximumBytes + 1) } catch {
            answer(client, .failure(StreamFailure("bad_request", "no message arrived within \(Self.clientDeadlineSeconds) s (\(error))")))
            return
        }
        let fds = received.descriptors
        func refuse(_ message: String) {
            for d in fds { _ = Glibc.close(d) }
            answer(client, .failure(StreamFailure("bad_request", message)))
        }
        if received.droppedDescriptors { return refuse("at most two descriptors: the stream's source, then its sink") }
        guard !received.bytes.isEmpty, received.bytes.count <= DescriptorHandover.maximumBytes else {
            return refuse("send one JSON object of at most \(DescriptorHandover.maximumBytes) bytes, {\"streamID\": ...}, with the descriptors")
        }
        let handover: DescriptorHandover
        do {
            guard case .object(let o) = try JSONValue(parsing: received.bytes) else { return refuse("the message must be a JSON object") }
            handover = try DescriptorHandover(body: o)
        } catch let e as HandoffError {
            return refuse(e.message)
        } catch {
            return refuse("the message is not JSON: \(error)")
        }
        let descriptors: HandedOverDescriptors
        switch HandedOverDescriptors.check(fds) {
        case .failure(let e):
            answer(client, .failure(StreamFailure("bad_request", e.message)))
            return
        case .success(let d): descriptors = d
        }
        let admitted = pending.withLockedValue { n in
            guard n < Self.maximumPending else { return false }
            n += 1
            return true
        }
        guard admitted else {
            descriptors.close()
            answer(client, .failure(StreamFailure("busy", "too many handovers at once; try again")))
            return
        }
        let broker = self.broker
        Task {
            let failure = await broker.handOver(handover.streamID, descriptors)
            self.queue.async {
                self.answer(client, failure.map { .failure($0) } ?? .success(()))
                self.pending.withLockedValue { $0 -= 1 }
            }
        }
    }

    /// One JSON line, then the close.
    private func answer(_ client: CInt, _ result: Result<Void, StreamFailure>) {
        var line: JSONValue
        switch result {
        case .success: line = DescriptorHandover.acceptedJSON
        case .failure(let f):
            line = APIError(status: 400, code: f.code, message: f.message).json
            logger.notice("descriptor handover refused", metadata: ["code": "\(f.code)", "reason": "\(f.message)"])
        }
        var bytes = line.serializedBytes()
        bytes.append(0x0A)
        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.close(client)
    }
}
