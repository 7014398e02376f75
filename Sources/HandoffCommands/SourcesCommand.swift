import ArgumentParser
import HandoffCore
import HandoffControlAPI

struct SourcesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources",
        abstract: "List the desktop sources, or turn one on or off.",
        discussion: """
            The session agent (handoff-session) makes what you do in other apps your current activity: \
            media (what an MPRIS player plays), recent-documents (the file you opened last in a synced folder), \
            browser (the focused tab, through the browser extension); and shares the desktop's clipboard: \
            clipboard (a copy here can be pasted on your other workstations). `handoffctl sources off media` \
            turns one off and keeps it off (in handoff-session.conf).
            """)

    @OptionGroup var options: ClientOptions

    @Argument(help: "`on` or `off`, then the source's name; nothing to list them.")
    var words: [String] = []

    func validate() throws {
        guard words.isEmpty || (words.count == 2 && ["on", "off"].contains(words[0])) else {
            throw ValidationError("say `handoffctl sources` to list, or `handoffctl sources on|off NAME` (\(DesktopSource.names.joined(separator: ", ")))")
        }
    }

    func run() async throws {
        let sources = words.isEmpty
            ? try await options.client.sources()
            : try await options.client.setSource(words[1], enabled: words[0] == "on")
        if options.json {
            Output.out(DesktopSource.listJSON(sources).prettySerialized())
            return
        }
        let width = sources.map(\.name.count).max() ?? 0
        for s in sources {
            Output.out("\(ActivityPrinter.pad(s.name, width + 2))\(s.enabled ? "on " : "off")  \(s.detail)")
        }
    }
}
