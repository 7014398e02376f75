import ArgumentParser
import HandoffCore

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the activities your other workstations offer now.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let offers = try await options.client.offers().sorted { $0.ageSeconds < $1.ageSeconds }
        if options.json {
            Output.out(JSONValue.object(["offers": .array(offers.map(\.json))]).prettySerialized())
            return
        }
        guard !offers.isEmpty else {
            Output.out("nothing offered by your other workstations")
            return
        }
        for o in offers {
            let title = o.activity.title.isEmpty ? "" : " \"\(o.activity.title)\""
            // Kept: its workstation sleeps (or is out of reach) and another keeps its offer.
            let kept = o.kept ? "  (origin asleep, kept here\(o.stale ? "; not saved before it slept" : ""))" : ""
            Output.out("\(ActivityPrinter.pad(o.device.name, 12))\(o.activity.activityType)\(title)  \(Age.text(seconds: o.ageSeconds)) ago  \(o.activity.id)\(kept)")
        }
    }
}
