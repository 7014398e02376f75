import ArgumentParser
import HandoffClient
import HandoffCore

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show whether handoffd runs, and what it offers.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let s = try await options.client.status()
        if options.json { Output.out(s.json.prettySerialized()); return }
        let current = s.current.map { ActivityPrinter.summary($0) + ", \($0.payloadSize) bytes" } ?? "none"
        Output.out("""
            handoffd \(s.version) (API \(s.apiVersion)), pid \(s.pid), up since \(s.startedAt.rfc3339)
            device:    \(s.deviceName)\(s.deviceID.map { " (\($0))" } ?? "")
            socket:    \(s.socketPath)
            current:   \(current)
            sessions:  \(s.sessions)
            discovery: \(s.discoveryAvailable ? "available" : "unavailable"): \(s.discoveryDetail)
            opening:   \(s.launcher ? "the session agent opens continued activities in their apps" : "no session agent: continue prints (start handoff-session in a graphical session)")
            """)
        if let stale = Doctor.staleDaemon(running: s.version) {
            Output.err("handoffctl: \(stale.detail): \(stale.fix ?? "")")
        }
    }
}
