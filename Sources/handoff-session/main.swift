import ArgumentParser
import Glibc
import NIOCore
import NIOPosix
import HandoffSystem

// Before any thread: libdispatch's syslog lines off (HandoffSystem/DispatchLog.swift).
DispatchLog.quiet()
// Swift concurrency on NIO's event loops, as in handoffd: libdispatch's global executor
// wakes a thread every second for ever, and the agent must sleep at idle.
_ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()

// A closed pipe is an error to report, not a reason to die.
signal(SIGPIPE, SIG_IGN)
do {
    let command = try SessionCommand.parse()
    try await command.run()
} catch {
    SessionCommand.exit(withError: error)
}
