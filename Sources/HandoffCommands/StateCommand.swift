import ArgumentParser
import HandoffCore
import HandoffControlAPI

struct StateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state", abstract: "List the restoration state apps saved here, or discard an app's.",
        discussion: """
            Apps save the state of their interface (open tabs, scroll positions) through handoffd and get it back \
            at their next start. It stays on this workstation, and is discarded when the app's version changes, \
            when the app crashed twice while restoring it, or with --discard.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("Discard this app's state.", valueName: "app"))
    var discard: String?

    func run() async throws {
        let client = options.client
        if let discard {
            try await client.discardState(app: discard)
            Output.out(options.json ? Acknowledgement.discarded(app: discard).json.serialized() : "discarded the state of \(discard)")
            return
        }
        let apps = try await client.listState()
        if options.json {
            Output.out(SavedState.listJSON(apps).prettySerialized())
            return
        }
        if apps.isEmpty { Output.out("no app has saved restoration state here") }
        for a in apps {
            var line = "\(a.app)  version \(a.version)  saved \(a.savedAt.rfc3339)  \(a.paths) path\(a.paths == 1 ? "" : "s")"
            if a.failedLaunches > 0 { line += "  \(a.failedLaunches) failed launch\(a.failedLaunches == 1 ? "" : "es")" }
            Output.out(line)
        }
    }
}
