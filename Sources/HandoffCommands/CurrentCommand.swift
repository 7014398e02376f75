import ArgumentParser

struct CurrentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "current", abstract: "Show this workstation's current activity (exit 1 if there is none).")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        guard let record = try await options.client.current() else {
            throw CommandFailure(description: "no activity is current on this workstation")
        }
        Output.out(options.json ? record.json.prettySerialized() : ActivityPrinter.details(record))
    }
}
