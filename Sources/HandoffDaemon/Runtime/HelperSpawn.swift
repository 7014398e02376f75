import CHandoffSystem
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// A helper process handoffd starts with one end of a socket pair as its standard input
/// and output (the history helper, the KDE Connect endpoint): it ends when that socket
/// closes, which is how handoffd ends it and what happens when handoffd dies, however it dies.
enum HelperSpawn {
    /// Starts `path` with `argv` (argv[0] included) and handoffd's environment but the
    /// variables that describe handoffd's own sockets; returns its pid and our end of the
    /// pair (close-on-exec). The error is a sentence.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func spawn(path: String, argv: [String]) -> Result<(pid: pid_t, fd: Int32), Failure> {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            return .failure(Failure("socketpair: \(String(cString: strerror(errno)))"))
        }
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
        let rc = handoff_spawn_on_socket(path, cArgs, cEnv, fds[1], &pid)
        Glibc.close(fds[1])
        guard rc == 0 else {
            Glibc.close(fds[0])
            return .failure(Failure(String(cString: strerror(rc))))
        }
        return .success((pid, fds[0]))
    }

    /// Our end of the pair as a channel with these handlers; the helper is killed (and
    /// reaped) if that fails. Once the channel closes, the helper is reaped on a pool
    /// thread and `ended` is told its pid.
    static func connect(pid: pid_t, fd: Int32, group: EventLoopGroup, handlers: @escaping @Sendable () -> [ChannelHandler],
                        ended: @escaping @Sendable (pid_t) -> Void = { _ in }) async throws -> Channel {
        do {
            let channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandlers(handlers()) }
                }
                .withConnectedSocket(fd).get()
            channel.closeFuture.whenComplete { _ in
                NIOThreadPool.singleton.submit { _ in
                    var status: Int32 = 0
                    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                    ended(pid)
                }
            }
            return channel
        } catch {
            Glibc.close(fd)
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            throw error
        }
    }
}
