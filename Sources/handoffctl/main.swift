import HandoffCommands
import HandoffSystem
#if canImport(Glibc)
import Glibc
#endif

// Before any thread: libdispatch's syslog lines off (HandoffSystem/DispatchLog.swift).
DispatchLog.quiet()
// A closed pipe (`| head`, a stream command that exits) is an error to report, not a
// reason to die silently.
signal(SIGPIPE, SIG_IGN)
await Handoffctl.runAndExit()
