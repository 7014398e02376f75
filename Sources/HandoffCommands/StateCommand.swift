import ArgumentParser
import HandoffCore

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
            Output.out(options.json ? JSONValue.object(["app": .string(discard), "discarded": .bool(true)]).serialized() : "discarded the state of \(discard)")
            return
        }
        let list = try await client.listState()
        if options.json {
            Output.out(list.prettySerialized())
            return
        }
        let apps = list.objectValue?["apps"]?.arrayValue ?? []
        if apps.isEmpty { Output.out("no app has saved restoration state here") }
        for a in apps {
            let o = a.objectValue ?? [:]
            var line = "\(o["app"]?.stringValue ?? "?")  version \(o["version"]?.stringValue ?? "?")  saved \(o["savedAt"]?.stringValue ?? "?")"
            if case .integer(let n)? = o["paths"] { line += "  \(n) path\(n == 1 ? "" : "s")" }
            if case .integer(let n)? = o["failedLaunches"], n > 0 { line += "  \(n) failed launch\(n == 1 ? "" : "es")" }
            Output.out(line)
        }
    }
}
