import ArgumentParser
import HandoffClient
import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

struct ContinueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "continue",
        abstract: "Continue here what you were doing on another workstation.",
        discussion: """
            Takes the most recent activity your trusted workstations offer (or the one named), fetches its \
            payload fresh from the origin, checks it, and prints it. The origin hears that it was continued.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("Only from this workstation (its name or device ID).", valueName: "device"))
    var from: String?

    @Option(name: .customLong("type"), help: ArgumentHelp("Only an activity of this type.", valueName: "type"))
    var activityType: String?

    @Option(help: ArgumentHelp("Exactly this activity.", valueName: "id"))
    var id: String?

    @Flag(help: "Open the activity's webpage URL with xdg-open, if it has one.")
    var open = false

    func run() async throws {
        let continued = try await options.client.continueActivity(from: from, type: activityType, id: id)
        if options.json {
            Output.out(continued.json.prettySerialized())
        } else {
            Output.out("continued from \(continued.device.name):")
            Output.out(ActivityPrinter.details(continued.record))
        }
        if open {
            guard let url = continued.record.activity.webpageURL else {
                Output.err("handoffctl: the activity has no webpage URL to open")
                return
            }
            let result = try? ShellCommand.run("exec xdg-open \"$0\"", arguments: [url])
            if result?.status != 0 {
                throw CommandFailure(description: "could not open \(url) with xdg-open (is it installed?)")
            }
        }
    }
}
