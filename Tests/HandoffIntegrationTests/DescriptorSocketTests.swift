import Dispatch
import Foundation
import HandoffControlAPI
import HandoffCore
import HandoffSystem
import HandoffTestSupport
import Testing

/// The descriptor socket (LocalAPI.md §15.8) on one daemon: every bad handover gets a clear
/// refusal, closes every descriptor that came with it, and harms nothing, including
/// thousands of them. A handover used for a real stream: ContinuationStreamTests.
@Suite struct DescriptorSocketTests {
    typealias Fixture = BadInputTests.Fixture

    /// Blocking socket calls run on a thread of their own: on the cooperative pool (two
    /// threads here) they would starve every other test running in parallel.
    func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { c in
            DispatchQueue.global().async { c.resume(with: Result { try body() }) }
        }
    }

    func path(_ f: Fixture) -> String { DescriptorPassing.socketPath(besideControlSocket: f.daemon.socketPath) }

    /// One handover: the message and descriptors, then the daemon's one-line answer.
    func handOver(_ f: Fixture, _ bytes: [UInt8], _ fds: [CInt]) async throws -> JSONValue {
        let socketPath = path(f)
        return try await offPool { try Self.handOverNow(socketPath, bytes, fds) }
    }

    static func handOverNow(_ socketPath: String, _ bytes: [UInt8], _ fds: [CInt]) throws -> JSONValue {
        let s = try UnixSocket.connect(to: socketPath, timeout: 5)
        defer { close(s) }
        if bytes.isEmpty {
            shutdown(s, Int32(SHUT_WR))
        } else {
            try DescriptorPassing.send(bytes, descriptors: fds, on: s)
        }
        return try JSONValue(parsing: readAll(s))
    }

    static func readAll(_ s: CInt) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(s, $0.baseAddress, $0.count) }
            if n <= 0 { return out }
            out += chunk[..<n]
        }
    }

    func code(_ answer: JSONValue) -> String? { answer.objectValue?["error"]?.objectValue?["code"]?.stringValue }
    func message(_ answer: JSONValue) -> String { answer.objectValue?["error"]?.objectValue?["message"]?.stringValue ?? "\(answer)" }

    /// What a process's open descriptors refer to (`pipe:[inode]`, `socket:[inode]`, a path).
    func targets(of pid: Int32) -> Set<String> {
        let dir = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return Set(names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/" + $0) })
    }

    /// True when the daemon holds none of the files `ours` refer to. Compared by what they
    /// are, not by count: a daemon still starting opens descriptors of its own meanwhile.
    func holdsNoneOf(_ ours: [CInt], daemon pid: Int32) -> Bool {
        let mine = Set(ours.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") })
        return targets(of: pid).isDisjoint(with: mine)
    }

    func message(stream id: String) -> [UInt8] { DescriptorHandover(streamID: id).json.serializedBytes() }

    /// A pipe: (read end, write end).
    func pipePair() -> (CInt, CInt) {
        var p: [CInt] = [0, 0]
        precondition(pipe(&p) == 0)
        // Not inherited by the daemons other tests start meanwhile (a race, closed at once).
        for fd in p { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (p[0], p[1])
    }

    @Test func theSocketIsThereAndPrivate() async throws {
        let f = try await Fixture.make()
        var st = stat()
        #expect(lstat(path(f), &st) == 0, "handoffd listens on \(path(f))")
        #expect((st.st_mode & S_IFMT) == S_IFSOCK)
        #expect(st.st_mode & 0o077 == 0, "only its user may connect: mode \(String(st.st_mode & 0o777, radix: 8))")
        await f.daemon.stop()
        #expect(access(path(f), F_OK) != 0, "a stopped daemon leaves no socket behind")
    }

    @Test func badHandoversAreRefusedAndTheirDescriptorsClosed() async throws {
        let f = try await Fixture.make()
        let pid = f.daemon.pid
        let unknown = ActivityID.random().rawValue
        let (r, w) = pipePair()
        defer { close(r); close(w) }
        let dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let file = open(f.daemon.socketPath.replacingOccurrences(of: "handoffd.sock", with: "plain"), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(dir); close(file) }
        let listening = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, socklen_t(MemoryLayout<sa_family_t>.size)) } }
        #expect(listen(listening, 1) == 0, "an autobound listening socket")
        let datagram = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let fifoPath = f.daemon.socketPath.replacingOccurrences(of: "handoffd.sock", with: "fifo")
        #expect(mkfifo(fifoPath, 0o600) == 0)
        let fifo = open(fifoPath, O_RDWR | O_CLOEXEC)
        defer { close(listening); close(datagram); close(fifo) }
        let cases: [(String, [UInt8], [CInt], String, String)] = [
            ("no descriptors", message(stream: unknown), [], "bad_request", "one descriptor"),
            ("not JSON", Array("hello".utf8), [r], "bad_request", "not JSON"),
            ("not an object", Array("[1]".utf8), [r], "bad_request", "JSON object"),
            ("no stream id", Array("{}".utf8), [r], "bad_request", "streamID"),
            ("an unknown field", Array(#"{"streamID":"\#(unknown)","x":1}"#.utf8), [r], "bad_request", "x"),
            ("too long", Array(repeating: 0x20, count: 5000), [r], "bad_request", "at most"),
            ("three descriptors", message(stream: unknown), [r, w, r], "bad_request", "source"),
            ("the maximum and more", message(stream: unknown), [r, w, r, w], "bad_request", "source"),
            ("a directory as the source", message(stream: unknown), [dir], "bad_request", "pipe, FIFO, connected stream socket or regular file"),
            ("a write end as the source", message(stream: unknown), [w], "bad_request", "not open for reading"),
            ("a regular file as the sink", message(stream: unknown), [r, file], "bad_request", "sink"),
            ("a read end as the sink", message(stream: unknown), [r, r], "bad_request", "not open for writing"),
            ("a listening socket as the source", message(stream: unknown), [listening], "bad_request", "connected stream socket"),
            ("a datagram socket as the source", message(stream: unknown), [datagram], "bad_request", "connected stream socket"),
            ("a FIFO open for writing too", message(stream: unknown), [fifo], "bad_request", "never end"),
            ("a stream nobody waits for", message(stream: unknown), [r, w], "unknown_stream", unknown),
        ]
        for (what, bytes, fds, expectedCode, mentions) in cases {
            let answer = try await handOver(f, bytes, fds)
            #expect(code(answer) == expectedCode, "\(what): \(answer)")
            #expect(message(answer).contains(mentions), "\(what): \(message(answer))")
        }
        // Connecting and saying nothing (closing at once) is refused too.
        #expect(code(try await handOver(f, [], [])) == "bad_request")
        // Every descriptor that came in went out again.
        let ours = [r, w, dir, file, listening, datagram, fifo]
        try await eventually(5, "the daemon to hold no descriptor of ours") { holdsNoneOf(ours, daemon: pid) }
        try await f.unharmed()
    }

    /// A client that connects and says nothing holds the socket no longer than its deadline.
    @Test func aSilentClientIsCutOff() async throws {
        let f = try await Fixture.make()
        let silent = try UnixSocket.connect(to: path(f), timeout: 10)
        defer { close(silent) }
        let start = Date()
        let answer = try JSONValue(parsing: try await offPool { Self.readAll(silent) })
        #expect(code(answer) == "bad_request" && message(answer).contains("no message"), "\(answer)")
        #expect(Date().timeIntervalSince(start) < 8)
        let (r, w) = pipePair()
        defer { close(r); close(w) }
        #expect(code(try await handOver(f, message(stream: ActivityID.random().rawValue), [r, w])) == "unknown_stream")
        try await f.unharmed()
    }

    /// An attacker's scale (of the same user, the only one who can connect): thousands of
    /// handovers, each with two descriptors; none is kept, and the daemon works on.
    @Test func thousandsOfHandoversLeaveNothingBehind() async throws {
        let f = try await Fixture.make()
        let pid = f.daemon.pid
        let (r, w) = pipePair()
        defer { close(r); close(w) }
        let socketPath = path(f)
        let messages = (0..<3000).map { _ in message(stream: ActivityID.random().rawValue) }
        let refused = try await offPool {
            try messages.filter { m in
                guard case .object(let o) = try Self.handOverNow(socketPath, m, [r, w]) else { return false }
                return o["error"]?.objectValue?["code"]?.stringValue == "unknown_stream"
            }.count
        }
        #expect(refused == 3000)
        try await eventually(5, "the daemon to hold no descriptor of ours") { holdsNoneOf([r, w], daemon: pid) }
        try await f.unharmed()
    }
}
