import ArgumentParser
import HandoffClient
import HandoffCore
import HandoffControlAPI

struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor", abstract: "Find out why handoff does not work here, and what to do.",
        discussion: """
            Checks handoffd and its socket and units, avahi-daemon, the network interfaces, firewall rules \
            (as root), every trusted workstation and why it is not connected, and clocks. Each finding is ok, \
            warning or failed, with a fix. Exits 1 if anything failed.
            """)

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let checks = await Doctor.run(client: options.client)
        let failed = checks.contains { $0.status == .failed }
        if options.json {
            Output.out(DiagnosticCheck.listJSON(checks).prettySerialized())
        } else {
            for c in checks {
                let mark = switch c.status { case .ok: "ok     "; case .warning: "warning"; case .failed: "FAILED " }
                Output.out("\(mark)  \(c.title): \(c.detail)")
                if let fix = c.fix, c.status != .ok { Output.out("         fix: \(fix)") }
            }
            let w = checks.filter { $0.status == .warning }.count, f = checks.filter { $0.status == .failed }.count
            Output.out(f + w == 0 ? "\nall \(checks.count) checks ok" : "\n\(f) failed, \(w) warning\(w == 1 ? "" : "s"), of \(checks.count) checks")
        }
        if failed { throw ExitCode(ExitStatus.failed) }
    }
}
