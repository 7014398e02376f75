import ArgumentParser
import HandoffCore

struct PeersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peers", abstract: "List the workstations seen on the network and those trusted.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let peers = try await options.client.peers()
        if options.json {
            Output.out(JSONValue.object(["peers": .array(peers.map(\.json))]).prettySerialized())
            return
        }
        guard !peers.isEmpty else {
            Output.out("no workstations seen yet (discovery: `handoffctl status`)")
            return
        }
        let now = SystemClock.now()
        for p in peers {
            let state = p.connected ? "connected" : p.trusted ? "trusted, not connected" : p.id == nil ? "seen" : "not trusted"
            let seen = p.lastSeen.map { " last seen \(Age.text(from: $0, to: now)) ago" } ?? ""
            Output.out("\(p.name.isEmpty ? "(unnamed)" : p.name)  [\(state)]\(seen)")
            Output.out("    id: \(p.id ?? "(not known yet)")")
            if !p.addresses.isEmpty { Output.out("    addresses: \(p.addresses.joined(separator: ", "))") }
        }
    }
}

enum Age {
    static func text(from: Timestamp, to: Timestamp) -> String {
        text(seconds: Double(from.nanoseconds(until: to)) / 1e9)
    }

    static func text(seconds: Double) -> String {
        let s = max(0, Int(seconds))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m" }
        if s < 86_400 { return "\(s / 3600)h\(s % 3600 / 60)m" }
        return "\(s / 86_400)d"
    }
}
