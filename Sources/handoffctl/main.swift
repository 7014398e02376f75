import HandoffCommands
#if canImport(Glibc)
import Glibc
#endif

// A closed pipe (`| head`, a stream command that exits) is an error to report, not a
// reason to die silently.
signal(SIGPIPE, SIG_IGN)
await Handoffctl.runAndExit()
