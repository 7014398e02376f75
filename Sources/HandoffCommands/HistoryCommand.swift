import ArgumentParser
import HandoffClient
import HandoffCore
import HandoffControlAPI

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Search what this workstation and your others offered, and reopen a page or document.",
        discussion: """
            Lists the activities whose apps let them be searched, newest first. Words match the \
            title, keywords, web page, document and the text the app opted in, as prefixes (all of \
            them). Kept for `history-days` (30) days in handoffd's state directory.
            """)

    @OptionGroup var options: ClientOptions

    @Argument(help: "Words to look for (all of them, as prefixes).")
    var words: [String] = []

    @Option(help: ArgumentHelp("Only what this workstation offered (by name or device ID).", valueName: "name"))
    var device: String?

    @Option(help: ArgumentHelp("Only since then: a duration back (30m, 2h, 7d) or an RFC 3339 date.", valueName: "when"))
    var since: String?

    @Option(help: "At most this many entries (1 to 1000).")
    var limit = 50

    @Option(help: ArgumentHelp("Reopen this entry's web page or document (its number in the list).", valueName: "n"))
    var open: Int64?

    @Flag(help: "Forget the whole history on this workstation.")
    var clear = false

    @Option(name: .customLong("delete"), help: ArgumentHelp("Delete this workstation's activities with this persistent identifier (--persistent-id) from the history here and on your other workstations. Repeatable.", valueName: "id"))
    var delete: [String] = []

    @Flag(name: .customLong("delete-all-mine"), help: "Delete all of this workstation's activities from the history here and on your other workstations.")
    var deleteAllMine = false

    func validate() throws {
        if !delete.isEmpty && deleteAllMine { throw ValidationError("--delete and --delete-all-mine contradict each other") }
    }

    func run() async throws {
        let client = options.client
        if !delete.isEmpty || deleteAllMine {
            let done = try await client.forgetSavedActivities(persistentIdentifiers: deleteAllMine ? nil : delete)
            Output.out(options.json ? done.json.serialized()
                : "forgot \(done.removed) entr\(done.removed == 1 ? "y" : "ies") here; asked \(done.asked) workstation\(done.asked == 1 ? "" : "s") to do the same")
            return
        }
        if clear {
            let n = try await client.clearHistory()
            Output.out(options.json ? JSONValue.object(["removed": .integer(Int64(n))]).serialized() : "forgot \(n) entr\(n == 1 ? "y" : "ies")")
            return
        }
        if let open {
            let reopened = try await client.reopenHistoryEntry(open)
            let (entry, launch) = (reopened.entry, reopened.launch)
            if options.json {
                Output.out(reopened.json.prettySerialized())
            } else if case .opened(let app) = launch {
                Output.out("opened \(entry.title.isEmpty ? entry.activityType : entry.title) in \(app.appName)")
            }
            if case .failed(let code, let message) = launch {
                throw CommandFailure(description: "could not reopen it (\(code)): \(message)", status: ExitStatus.failed)
            }
            return
        }
        let now = SystemClock.now()
        var sinceTime: Timestamp?
        if let since {
            // "7d" means seven days back: the expiry parser reads forward, so mirror it.
            let ahead = try ExpiryArgument.parse(since, now: now)
            sinceTime = Timestamp(rfc3339: since) ?? Timestamp(seconds: 2 * now.seconds - ahead.seconds)
        }
        guard (1...HistoryQuery.maximumLimit).contains(limit) else {
            throw CommandFailure(description: "--limit must be 1 to \(HistoryQuery.maximumLimit)", status: ExitStatus.usage)
        }
        let entries = try await client.history(HistoryQuery(text: words.isEmpty ? nil : words.joined(separator: " "), device: device,
                                                            since: sinceTime, limit: limit))
        if options.json {
            Output.out(HistoryEntry.listJSON(entries).prettySerialized())
            return
        }
        if entries.isEmpty {
            Output.out(words.isEmpty ? "the history is empty: activities appear here when their apps let them be searched" : "nothing matches")
            return
        }
        for e in entries {
            let what = e.title.isEmpty ? e.activityType : e.title
            Output.out("\(e.id)  \(e.lastSeen.rfc3339.prefix(16).replacingT())  \(e.local ? "here" : e.device.name)  \(what)")
            if let url = e.webpageURL { Output.out("      \(url)") } else if let doc = e.documentPath { Output.out("      \(doc)") }
        }
    }
}

extension Substring {
    func replacingT() -> String { String(map { $0 == "T" ? " " : $0 }) }
}
