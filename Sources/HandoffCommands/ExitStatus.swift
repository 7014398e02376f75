import ArgumentParser

/// handoffctl's documented exit codes.
enum ExitStatus {
    static let ok: Int32 = 0
    /// The daemon refused or something failed.
    static let failed: Int32 = 1
    /// Bad command line.
    static let usage: Int32 = 2
    /// handoffd is not running or not reachable.
    static let unreachable: Int32 = 3
}

/// A failure already worded for the user; handoffctl prints it and exits with `status`.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    var status: Int32 = ExitStatus.failed
}
