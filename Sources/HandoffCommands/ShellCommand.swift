import CHandoffSystem
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// Runs `/bin/sh -c CMD` and collects its stdout (bounded), for `--refresh-with`.
enum ShellCommand {
    struct Result {
        var status: Int32
        var output: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// `arguments` become $0, $1, ... of the script, so they need no quoting.
    static func run(_ command: String, arguments: [String] = [], outputLimit: Int = 1 << 20) throws -> Result {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        posix_spawn_file_actions_addclose(&actions, pipeFDs[1])
        // Nor any other of ours: the control connection, which NIO made inheritable.
        handoff_spawn_actions_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        handoff_spawnattr_clean_signals(&attributes)
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command)] + arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let rc = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ)
        close(pipeFDs[1])
        guard rc == 0 else {
            close(pipeFDs[0])
            throw Failure(description: "cannot start /bin/sh: \(String(cString: strerror(rc)))")
        }
        var output: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { read(pipeFDs[0], $0.baseAddress!, $0.count) }
            if n < 0 { if errno == EINTR { continue }; break }
            if n == 0 { break }
            if output.count < outputLimit { output += buf[0..<min(n, outputLimit - output.count)] }
        }
        close(pipeFDs[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7f) == 0
        return Result(status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), output: output)
    }

    /// F_SETPIPE_SZ (Linux), which Glibc's module does not export.
    static let setPipeSize: Int32 = 1031

    /// A running `/bin/sh -c CMD` whose stdin and stdout are pipes to us (stderr is ours).
    struct Child: Sendable {
        let pid: pid_t
        let stdin: CInt
        let stdout: CInt
        /// Its exit status once reaped. After that its pid may be another process's: it is
        /// signalled only while this is nil, under the same lock as the reaping.
        private let reaped = NIOLockedValueBox<Int32?>(nil)

        init(pid: pid_t, stdin: CInt, stdout: CInt) {
            self.pid = pid
            self.stdin = stdin
            self.stdout = stdout
        }

        /// Waits for it to exit: its status as a shell reports it (128+N for signal N).
        func wait() -> Int32 {
            if let status = reaped.withLockedValue({ $0 }) { return status }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let shell = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            reaped.withLockedValue { $0 = shell }
            return shell
        }

        /// SIGTERM, unless it was reaped already.
        func terminate() {
            reaped.withLockedValue { if $0 == nil { _ = kill(pid, SIGTERM) } }
        }
    }

    /// Starts CMD with `environment` added to ours.
    static func spawn(_ command: String, environment: [String: String]) throws -> Child {
        var input: [Int32] = [0, 0]
        var output: [Int32] = [0, 0]
        guard pipe(&input) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
        guard pipe(&output) == 0 else {
            close(input[0]); close(input[1])
            throw Failure(description: "pipe: \(String(cString: strerror(errno)))")
        }
        // Not inherited by other children (several streams may run at once).
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // 1 MiB pipes instead of 64 KiB: bigger reads, fewer frames and wake-ups per GB.
        for fd in [input[1], output[0]] { _ = fcntl(fd, ShellCommand.setPipeSize, 1 << 20) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        // Nothing else of ours: a command that outlived handoffctl must not hold its
        // connection to handoffd (the attached session would never end).
        handoff_spawn_actions_close_from(&actions, 3)
        // The child starts with every signal at its default and none blocked: SIGPIPE,
        // which we ignore (a normal `cat` should die on a closed pipe), and SIGTERM, which
        // whoever started us may have ignored or blocked and the spawning thread blocks
        // (both are inherited across exec): stopping a stream's command is a SIGTERM.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        handoff_spawnattr_clean_signals(&attributes)
        var env: [String] = []
        var i = 0
        while let e = environ[i] {
            let entry = String(cString: e)
            let key = String(entry.prefix { $0 != "=" })
            if environment[key] == nil { env.append(entry) }
            i += 1
        }
        for (k, v) in environment { env.append("\(k)=\(v)") }
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) }; for p in envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp)
        close(input[0])
        close(output[1])
        guard rc == 0 else {
            close(input[1]); close(output[0])
            throw Failure(description: "cannot start /bin/sh: \(String(cString: strerror(rc)))")
        }
        return Child(pid: pid, stdin: input[1], stdout: output[0])
    }
}
