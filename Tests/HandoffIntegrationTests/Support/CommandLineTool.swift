import CHandoffSystem
import Foundation
import HandoffTestSupport

/// Runs a built executable (handoffctl) as a user would and collects what it printed.
struct CommandResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

enum CommandLineTool {
    static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                    stdin: String? = nil) async throws -> CommandResult {
        // Output goes to files, not pipes: a command that leaves a background process
        // behind (scripts/netns does) would otherwise keep a pipe open for ever. And
        // posix_spawn + waitpid rather than Foundation's Process, whose waiting spun and
        // never reaped such a script here.
        let dir = try TestEnvironment.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inPath = dir + "/in", outPath = dir + "/out", errPath = dir + "/err"
        try (stdin ?? "").write(toFile: inPath, atomically: false, encoding: .utf8)
        let pid = try spawn(executable, arguments, environment: environment, stdin: inPath, stdout: outPath, stderr: errPath)
        let status = await offPool { () -> Int32 in
            var st: Int32 = 0
            while waitpid(pid, &st, 0) < 0 && errno == EINTR {}
            return (st & 0x7f) == 0 ? (st >> 8) & 0xff : 128 + (st & 0x7f)
        }
        return CommandResult(status: status,
                             stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                             stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }

    static func spawn(_ executable: String, _ arguments: [String], environment: [String: String],
                      stdin: String, stdout: String, stderr: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // Nothing else of the test process: what a spawned script leaves running (the
        // netns hosts) would otherwise hold other tests' connections open for minutes.
        handoff_spawn_actions_close_from(&actions, 3)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        // Nor the spawning thread's signal mask (a Dispatch thread blocks nearly every
        // signal, SIGTERM too, and the mask survives exec): children start clean.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        handoff_spawnattr_clean_signals(&attributes)
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw TestFailure("cannot start \(executable): \(String(cString: strerror(rc)))") }
        return pid
    }

    static func handoffctl(_ arguments: [String], daemon: DaemonProcess, stdin: String? = nil) async throws -> CommandResult {
        try await run(try TestEnvironment.binary("handoffctl"), arguments, environment: daemon.environment, stdin: stdin)
    }
}
