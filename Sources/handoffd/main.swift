// handoffd, and handoff-kdeconnect by that name: the KDE Connect endpoint is handoffd's
// own file started under another name (handoffd starts it so when KDE Connect is turned
// on), so it adds no second copy of NIO, TLS and the certificates to the package.
import HandoffSystem
import HandoffdProgram
import KDEConnectProgram
#if canImport(Glibc)
import Glibc
#endif

// Before any thread: libdispatch's syslog lines off (HandoffSystem/DispatchLog.swift).
DispatchLog.quiet()
let arguments = Array(CommandLine.arguments.dropFirst())
switch CommandLine.arguments.first?.split(separator: "/").last.map(String.init) ?? "handoffd" {
case "handoff-kdeconnect":
    exit(await KDEConnectProgram.run(arguments))
default:
    HandoffdProgram.main(arguments)
}
