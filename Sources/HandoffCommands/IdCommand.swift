import ArgumentParser
import HandoffCore

struct IdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id", abstract: "Print this workstation's device ID (give it to `handoffctl trust` on your others).")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let identity = try await options.client.identity()
        Output.out(options.json ? identity.json.prettySerialized() : identity.deviceID)
    }
}
