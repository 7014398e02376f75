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
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command)] + arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let rc = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ)
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
}
