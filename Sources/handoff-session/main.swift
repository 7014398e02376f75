// handoff-session, and handoff-browser-host by that name: the two programs that link the
// desktop's libraries (GIO, XCB, Wayland) share one file, chosen by the name it is started
// under (/usr/libexec/handoff/handoff-browser-host is a link to it). The others stay files
// of their own, so that each loads only the libraries it needs: Docs/Packaging.md, "One
// executable?", has the measurements.
import BrowserHostProgram
import HandoffSystem
import SessionProgram
#if canImport(Glibc)
import Glibc
#endif

// Before any thread: libdispatch's syslog lines off (HandoffSystem/DispatchLog.swift).
DispatchLog.quiet()

/// The names this file answers to.
enum Programs {
    static let names = ["handoff-session", "handoff-browser-host"]
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch CommandLine.arguments.first?.split(separator: "/").last.map(String.init) ?? "handoff-session" {
case "handoff-browser-host":
    BrowserHostProgram.prepare()
    await BrowserHostProgram.run(arguments)
case "handoff-session":
    SessionProgram.prepare()
    await SessionProgram.run(arguments)
case let name:
    var text = """
        handoff-session: started as '\(name)', which is none of its programs (\(Programs.names.joined(separator: ", "))).
        Start it by one of those names (the package installs handoff-browser-host as a link to it).

        """
    text.withUTF8 { _ = try? writeAll(2, UnsafeRawBufferPointer($0)) }
    exit(127)
}
