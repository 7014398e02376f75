import ArgumentParser
import HandoffClient
import HandoffControlAPI
#if canImport(Glibc)
import Glibc
#endif

/// handoffctl: a thin command line over HandoffClient. Parse, call, print.
public struct Handoffctl: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "handoffctl",
        abstract: "Start something on one workstation, continue it on another.",
        discussion: """
            Talks to the local handoffd. Exit codes: 0 ok, 1 failed, 2 usage error, 3 handoffd not reachable.
            The options every command takes, --socket and --json, may also come before the command \
            (handoffctl --json peers).
            """,
        version: APIVersion.software,
        subcommands: [
            StatusCommand.self, BecomeCurrentCommand.self, CurrentCommand.self, UpdateCommand.self,
            ResignCommand.self, InvalidateCommand.self, WatchCommand.self,
            IdCommand.self, TrustCommand.self, UntrustCommand.self, PeersCommand.self, ListCommand.self, ContinueCommand.self, PairCommand.self, DevicesCommand.self, RemoveCommand.self, SourcesCommand.self, HistoryCommand.self, StateCommand.self, DoctorCommand.self, ForgetCommand.self,
            ClipboardCommand.self, CopyCommand.self, PasteCommand.self, OfferTerminalCommand.self, ShellIntegrationCommand.self, KDEConnectCommand.self,
        ])

    public init() {}

    /// Runs handoffctl and exits with its documented code (never ArgumentParser's 64).
    public static func runAndExit(_ arguments: [String]) async -> Never {
        let code: Int32
        do {
            var command = try parseAsRoot(LeadingOptions.reordered(arguments, root: Handoffctl.self))
            if var async = command as? AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
            code = ExitStatus.ok
        } catch let failure as CommandFailure {
            Output.err("handoffctl: \(failure.description)")
            code = failure.status
        } catch let e as HandoffClientError {
            Output.err("handoffctl: \(e.description)")
            if case .daemonNotRunning = e { code = ExitStatus.unreachable } else { code = ExitStatus.failed }
        } catch {
            let parserCode = exitCode(for: error)
            if parserCode == .success {
                Output.out(fullMessage(for: error))
                code = ExitStatus.ok
            } else if error is ExitCode {
                code = parserCode.rawValue
            } else {
                Output.err(fullMessage(for: error))
                code = parserCode == .validationFailure ? ExitStatus.usage : ExitStatus.failed
            }
        }
        Glibc.exit(code)
    }
}
