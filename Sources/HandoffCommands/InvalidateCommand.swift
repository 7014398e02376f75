import ArgumentParser

struct InvalidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invalidate", abstract: "End the current activity (or ID) for good.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The activity's id (default: the current activity).")
    var id: String = "current"

    func run() async throws {
        let record = try await options.client.invalidate(id)
        Output.out(options.json ? record.json.prettySerialized() : ActivityPrinter.summary(record))
    }
}
