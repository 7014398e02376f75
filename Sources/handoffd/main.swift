import NIOCore
import NIOPosix

// Swift concurrency on NIO's event loops, before any task runs: with libdispatch's
// default executor, a monitor thread would wake the idle daemon once a second, for ever.
_ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()

Handoffd.runUntilStopped()
