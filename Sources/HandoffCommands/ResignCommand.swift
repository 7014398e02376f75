import ArgumentParser

struct ResignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resign", abstract: "Stop offering the current activity (or ID); it stays alive and can become current again.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The activity's id (default: the current activity).")
    var id: String = "current"

    func run() async throws {
        let record = try await options.client.resign(id)
        Output.out(options.json ? record.json.prettySerialized() : ActivityPrinter.summary(record))
    }
}
