import ArgumentParser

struct TrustCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Trust another of your workstations by its device ID.",
        discussion: "Both workstations must trust each other before either can see or continue the other's activities.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The other workstation's device ID (`handoffctl id` there; dashes and case do not matter).")
    var deviceID: String

    @Option(help: "A name to show for it (default: the name it advertises).")
    var name: String?

    @Option(help: ArgumentHelp("Dial it at this address whatever mDNS says (across a VPN or a router).", valueName: "host:port"))
    var address: String?

    func run() async throws {
        let peer = try await options.client.trust(deviceID, name: name, address: address)
        let name = peer.name ?? ""
        Output.out(options.json ? peer.json.prettySerialized() : "trusted \(peer.deviceID)\(name.isEmpty ? "" : " (\(name))")")
    }
}

struct UntrustCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "untrust", abstract: "Stop trusting a workstation; its connection is closed at once.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The workstation's device ID.")
    var deviceID: String

    func run() async throws {
        try await options.client.untrust(deviceID)
        if !options.json { Output.out("no longer trusted: \(deviceID)") } else { Output.out("{\"trusted\": false}") }
    }
}
