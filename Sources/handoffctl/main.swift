import HandoffCommands
import HandoffSystem

// Before any thread: libdispatch's syslog lines off (HandoffSystem/DispatchLog.swift).
DispatchLog.quiet()
HandoffctlProgram.prepare()
await HandoffctlProgram.run(Array(CommandLine.arguments.dropFirst()))
