import CHandoffSystem

/// libdispatch's syslog lines, off for this process (LIBDISPATCH_LOG still turns them on):
/// since the Swift 6.1 toolchain it logs "Failed to set thread priority for worker thread"
/// for each worker thread an unprivileged process starts, which put a line in the user's
/// journal per handoffctl run (a prompt's). The priority it wanted is one only root may set.
public enum DispatchLog {
    /// First thing in main, before any thread starts.
    public static func quiet() { handoff_quiet_dispatch_log() }
}
