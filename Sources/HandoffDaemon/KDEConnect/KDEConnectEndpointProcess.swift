import CHandoffSystem
import HandoffCore
import HandoffKDEConnect
import HandoffSystem
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// One running handoff-kdeconnect: handoffd's own executable started by that name, with a
/// socket pair as its standard input and output (`KDEConnectBridgeLine`s). It stops when
/// the socket closes, which is how it is ended, and also what happens when handoffd dies.
final class KDEConnectEndpointProcess: Sendable {
    let pid: pid_t
    private let channel: Channel

    private init(pid: pid_t, channel: Channel) {
        self.pid = pid
        self.channel = channel
    }

    /// handoffd's own executable, which answers to the name handoff-kdeconnect.
    static func ownExecutable() -> String {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        guard n > 0 else { return "/proc/self/exe" }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func start(arguments: [String], group: EventLoopGroup,
                      lines: @escaping @Sendable (KDEConnectBridgeLine) -> Void,
                      ended: @escaping @Sendable (pid_t) -> Void) async throws(HandoffError) -> KDEConnectEndpointProcess {
        func failure(_ why: String) -> HandoffError {
            HandoffError(.unavailable, code: "kdeconnect_unavailable", message: "cannot start the KDE Connect endpoint: \(why)")
        }
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw failure("socketpair: \(String(cString: strerror(errno)))")
        }
        // /proc/self/exe, not the path it names: after an upgrade replaced the file, the
        // endpoint is still the same version as this handoffd.
        let argv = ["handoff-kdeconnect"] + arguments
        var env: [String] = []
        var e = environ
        while let p = e.pointee {
            let entry = String(cString: p)
            if !["LISTEN_FDS=", "LISTEN_PID=", "LISTEN_FDNAMES=", "NOTIFY_SOCKET="].contains(where: entry.hasPrefix) { env.append(entry) }
            e += 1
        }
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup($0) } + [nil]
        defer { for p in cArgs + cEnv { free(p) } }
        var pid: Int32 = 0
        let rc = handoff_spawn_on_socket("/proc/self/exe", cArgs, cEnv, fds[1], &pid)
        Glibc.close(fds[1])
        guard rc == 0 else {
            Glibc.close(fds[0])
            throw failure(String(cString: strerror(rc)))
        }
        do {
            let channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            ByteToMessageHandler(CappedLineDecoder(limit: LineLimit(KDEConnectBridgeLine.limit))),
                            BridgeLineHandler(lines: lines),
                        ])
                    }
                }
                .withConnectedSocket(fds[0]).get()
            let child = pid
            channel.closeFuture.whenComplete { _ in
                // Reaped on a pool thread: it exits once its socket closes.
                NIOThreadPool.singleton.submit { _ in
                    var status: Int32 = 0
                    while waitpid(child, &status, 0) < 0 && errno == EINTR {}
                    ended(child)
                }
            }
            return KDEConnectEndpointProcess(pid: pid, channel: channel)
        } catch {
            Glibc.close(fds[0])
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            throw failure("\(error)")
        }
    }

    func send(_ line: KDEConnectBridgeLine) {
        channel.writeAndFlush(channel.allocator.buffer(bytes: line.encoded), promise: nil)
    }

    /// Closes its socket; it stops on its own. One that has not gone after `grace` is killed.
    func stop(grace: TimeAmount = .seconds(3)) {
        let pid = pid
        let channel = channel
        channel.close(promise: nil)
        channel.eventLoop.scheduleTask(in: grace) {
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        }
    }
}

private final class BridgeLineHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let lines: @Sendable (KDEConnectBridgeLine) -> Void

    init(lines: @escaping @Sendable (KDEConnectBridgeLine) -> Void) { self.lines = lines }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        if let line = try? KDEConnectBridgeLine(parsing: bytes.readableBytesView) { lines(line) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
