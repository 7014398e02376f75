import NIOCore
import NIOPosix

/// handoffd, as the one executable starts it when it is called by that name.
public enum HandoffdProgram {
    /// Never returns: the daemon's exit status ends the process.
    public static func main(_ arguments: [String]) -> Never {
        // One event loop for the whole daemon, whatever the number of cores (NIO's default
        // is one per core): a handoff moves one stream at a time, and on one loop a stream's
        // bytes go from the app's connection to the peer's without crossing threads.
        // Measured: less CPU relaying a stream, starting among many peers and refusing a
        // flood (Performance.md).
        NIOSingletons.groupLoopCountSuggestion = 1
        // Swift concurrency on NIO's event loops, before any task runs: with libdispatch's
        // default executor, a monitor thread would wake the idle daemon once a second, for ever.
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        Handoffd.runUntilStopped(arguments)
    }
}
