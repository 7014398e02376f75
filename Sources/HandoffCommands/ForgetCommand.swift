import ArgumentParser
import HandoffCore

struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Drop the offers this workstation keeps for your others while they sleep (all, or one workstation's).")

    @OptionGroup var options: ClientOptions

    @Argument(help: ArgumentHelp("Only this workstation's (its name or device ID).", valueName: "device"))
    var device: String?

    func run() async throws {
        let n = try await options.client.forgetKept(device: device)
        if options.json {
            Output.out(JSONValue.object(["forgotten": .integer(Int64(n))]).prettySerialized())
        } else {
            Output.out(n == 0 ? "nothing kept here" : "forgot what was kept for \(n) workstation\(n == 1 ? "" : "s")")
        }
    }
}
