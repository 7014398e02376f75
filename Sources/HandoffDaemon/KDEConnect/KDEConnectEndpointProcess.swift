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
        // /proc/self/exe, not the path it names: after an upgrade replaced the file, the
        // endpoint is still the same version as this handoffd.
        let (pid, fd): (pid_t, Int32)
        switch HelperSpawn.spawn(path: "/proc/self/exe", argv: ["handoff-kdeconnect"] + arguments) {
        case .success(let started): (pid, fd) = started
        case .failure(let why): throw failure(why.description)
        }
        do {
            let channel = try await HelperSpawn.connect(pid: pid, fd: fd, group: group, handlers: {
                [ByteToMessageHandler(CappedLineDecoder(limit: LineLimit(KDEConnectBridgeLine.limit))), BridgeLineHandler(lines: lines)]
            }, ended: ended)
            return KDEConnectEndpointProcess(pid: pid, channel: channel)
        } catch {
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
