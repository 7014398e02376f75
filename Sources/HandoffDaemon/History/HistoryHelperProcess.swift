import HandoffCore
import HandoffHistoryProtocol
import NIOCore
import NIOExtras
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// One running `handoff-history` (Sources/handoff-history): started with a socketpair as
/// its standard input and output, spoken to in JSON lines, one reply per request in order.
/// It exits when its input closes, which is how it is ended, and also what happens when
/// handoffd dies, however it dies.
final class HistoryHelperProcess: Sendable {
    let pid: pid_t
    private let channel: Channel

    private init(pid: pid_t, channel: Channel) {
        self.pid = pid
        self.channel = channel
    }

    var isActive: Bool { channel.isActive }

    /// Where the helper is: `HANDOFF_HISTORY_HELPER`, else `handoff-history` next to the
    /// running executable (scripts/install and the build directory), else in
    /// `PREFIX/libexec/handoff/` for an executable in `PREFIX/bin/` (the Debian package).
    static func defaultPath() -> String {
        if let p = getenv("HANDOFF_HISTORY_HELPER"), p.pointee != 0 { return String(cString: p) }
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        guard n > 0 else { return "handoff-history" }
        let exe = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return candidatePaths(executable: exe).first { access($0, X_OK) == 0 } ?? candidatePaths(executable: exe)[0]
    }

    /// The places `defaultPath` looks, in order, for the executable at `exe`.
    static func candidatePaths(executable exe: String) -> [String] {
        guard let slash = exe.lastIndex(of: "/") else { return ["handoff-history"] }
        let dir = String(exe[..<slash])
        var paths = [dir + "/handoff-history"]
        if dir.hasSuffix("/bin") { paths.append(String(dir.dropLast(3)) + "libexec/handoff/handoff-history") }
        return paths
    }

    static func start(path: String, directory: String, retentionDays: Int64, group: EventLoopGroup) async throws(HandoffError) -> HistoryHelperProcess {
        guard access(path, X_OK) == 0 else {
            throw HandoffError(.unavailable, code: "history_unavailable",
                               message: "the history helper \(path) is missing or not executable (\(String(cString: strerror(errno)))): reinstall handoff (the package puts it in /usr/libexec/handoff, scripts/install next to handoffd)")
        }
        let argv = [path, "--directory", directory, "--retention-days", String(retentionDays)]
        let (pid, fd): (pid_t, Int32)
        switch HelperSpawn.spawn(path: path, argv: argv) {
        case .success(let started): (pid, fd) = started
        case .failure(let why): throw HandoffError(.unavailable, code: "history_unavailable", message: "cannot start the history helper \(path): \(why)")
        }
        do {
            let channel = try await HelperSpawn.connect(pid: pid, fd: fd, group: group, handlers: {
                [ByteToMessageHandler(LineBasedFrameDecoder()), RequestResponseHandler<ByteBuffer, ByteBuffer>()]
            })
            return HistoryHelperProcess(pid: pid, channel: channel)
        } catch {
            throw HandoffError(.unavailable, code: "history_unavailable", message: "cannot talk to the history helper: \(error)")
        }
    }

    /// One request and its reply. A helper that does not answer within `timeout` is killed,
    /// so a wedged history costs one error, not a request that never ends.
    func send(_ request: HistoryHelperRequest, timeout: TimeAmount) async throws -> HistoryHelperReply {
        var line = channel.allocator.buffer(capacity: 256)
        line.writeString(request.json.serialized())
        line.writeInteger(UInt8(ascii: "\n"))
        let promise = channel.eventLoop.makePromise(of: ByteBuffer.self)
        let pid = pid
        let deadline = channel.eventLoop.scheduleTask(in: timeout) {
            kill(pid, SIGKILL)
            promise.fail(HistoryHelperTimeout(limit: timeout))
        }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        channel.writeAndFlush((line, promise), promise: nil)
        let reply = try await promise.futureResult.get()
        return try HistoryHelperReply(json: try JSONValue(parsing: Array(reply.readableBytesView)))
    }

    func close() {
        channel.close(promise: nil)
    }
}

struct HistoryHelperTimeout: Error, CustomStringConvertible {
    var limit: TimeAmount
    var description: String { "the history helper did not answer within \((Double(limit.nanoseconds) / 1e9).fixedPoint(digits: 1)) s" }
}
