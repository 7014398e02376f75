import CHandoffSystem
import HistoryProgram

// Before any thread: libdispatch's syslog lines off (HandoffSystem/DispatchLog.swift says
// why). Called through the C shim, not HandoffSystem, which would link NIO into the helper.
handoff_quiet_dispatch_log()
HistoryProgram.main(Array(CommandLine.arguments.dropFirst()))
