import ArgumentParser
import HandoffCore

struct IdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id", abstract: "Print this workstation's device ID (give it to `handoffctl trust` on your others).")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let (id, name) = try await options.client.identity()
        Output.out(options.json ? JSONValue.object(["deviceID": .string(id), "name": .string(name)]).prettySerialized() : id)
    }
}
