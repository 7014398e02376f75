#if canImport(Glibc)
import Glibc
#endif

/// handoffctl, as the one executable starts it when it is called by that name.
public enum HandoffctlProgram {
    /// Before any task runs.
    public static func prepare() {
        // A closed pipe (`| head`, a stream command that exits) is an error to report, not
        // a reason to die silently.
        signal(SIGPIPE, SIG_IGN)
    }

    public static func run(_ arguments: [String]) async -> Never {
        await Handoffctl.runAndExit(arguments)
    }
}
