import ArgumentParser
import Glibc
import NIOCore
import NIOPosix

/// handoff-session, as the one executable starts it when it is called by that name.
public enum SessionProgram {
    /// Before any task runs (the one executable's main calls it, then runs `run`).
    public static func prepare() {
        // Swift concurrency on NIO's event loops, as in handoffd: libdispatch's global
        // executor wakes a thread every second for ever, and the agent must sleep at idle.
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        // A closed pipe is an error to report, not a reason to die.
        signal(SIGPIPE, SIG_IGN)
    }

    public static func run(_ arguments: [String]) async -> Never {
        do {
            let command = try SessionCommand.parse(arguments)
            try await command.run()
            SessionCommand.exit()
        } catch {
            SessionCommand.exit(withError: error)
        }
    }
}
