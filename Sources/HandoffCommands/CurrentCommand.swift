import ArgumentParser

struct CurrentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "current", abstract: "Show this workstation's current activity (exit 1 if there is none).")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        guard let record = try await options.client.current() else {
            throw CommandFailure(description: "no activity is current on this workstation")
        }
        if options.json { return Output.out(record.json.prettySerialized()) }
        // Offered to some workstations only: by the names the account knows them by.
        var names: [String: String] = [:]
        if record.to?.isEmpty == false, let devices = try? await options.client.devices() {
            for m in devices.members { names[m.id] = m.name }
        }
        Output.out(ActivityPrinter.details(record, names: names))
    }
}
