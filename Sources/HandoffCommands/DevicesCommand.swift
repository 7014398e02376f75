import ArgumentParser
import HandoffCore

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List the workstations of your account: who introduced each, and those removed.",
        discussion: "Pairing a workstation with any member makes it a member everywhere; `handoffctl remove ID` removes one everywhere.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let d = try await options.client.devices()
        if options.json {
            Output.out(d.json.prettySerialized())
            return
        }
        for m in d.members {
            let state = m.isSelf ? "this workstation" : m.connected ? "connected" : "not connected"
            Output.out("\(m.name.isEmpty ? "(unnamed)" : m.name)  [\(state)]")
            Output.out("    id: \(m.id)")
            if let by = m.introducedBy {
                Output.out("    introduced by \(by.name.isEmpty ? String(by.id.prefix(7)) : by.name)\(m.introducedAt.map { " on \($0.rfc3339)" } ?? "")")
            }
        }
        if d.members.count <= 1 { Output.out("no other workstations yet: `handoffctl pair` on this one and on another") }
        for r in d.removed {
            Output.out("removed: \(r.name.isEmpty ? r.id : r.name)\(r.removedBy.map { " by \($0.name.isEmpty ? String($0.id.prefix(7)) : $0.name)" } ?? "")\(r.removedAt.map { " on \($0.rfc3339)" } ?? "")")
            Output.out("    id: \(r.id)")
        }
    }
}

struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a workstation from your account, on every member.",
        discussion: "Every member that hears of it stops trusting the device and drops its connection. Removal is final: the device can come back only with a new identity.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The workstation's device ID (`handoffctl devices`).")
    var deviceID: String

    func run() async throws {
        try await options.client.removeDevice(deviceID)
        Output.out(options.json ? "{\"removed\": true}" : "removed \(deviceID): every member will stop trusting it as it hears")
    }
}
