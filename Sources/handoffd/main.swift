import HandoffSystem
import HandoffdProgram

// Before any thread: libdispatch's syslog lines off (HandoffSystem/DispatchLog.swift).
DispatchLog.quiet()
HandoffdProgram.main(Array(CommandLine.arguments.dropFirst()))
