import ArgumentParser
import HandoffCore
import HandoffControlAPI

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Print handoffd's events as they happen (--json: JSON lines).")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        try await options.client.withSession { session in
            if options.json { Output.out(ControlEvent.session(token: session.token).json.serialized()) }
            do {
                for try await event in session.events {
                    Output.out(options.json ? event.json.serialized() : Self.describe(event))
                }
            } catch {
                throw CommandFailure(description: "lost the connection to handoffd: \(error)")
            }
            throw CommandFailure(description: "handoffd closed the event stream (was it stopped?)")
        }
    }

    static func describe(_ event: ControlEvent) -> String {
        let time = String(SystemClock.now().rfc3339.dropFirst(11).prefix(12))
        switch event {
        case .becameCurrent(let r), .resigned(let r), .updated(let r), .expired(let r):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(ActivityPrinter.summary(r))"
        case .invalidated(let r, let reason):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(ActivityPrinter.summary(r)) (\(reason))"
        case .willSave(let id, _):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(id)"
        case .session(let token):
            return "\(time) session        \(token)"
        case .wasContinued(let id, let device):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(id) by \(device.name)"
        case .peerConnected(let device), .peerDisconnected(let device, _):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(device.name) \(device.id)"
        case .peerOffer(let device, let summary):
            let what = summary.map { "\($0.activityType) \"\($0.title)\" \($0.id)" } ?? "(nothing)"
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(device.name): \(what)"
        case .willContinue(let type, let device):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(type) from \(device.name)"
        case .continued(let r, let device):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(ActivityPrinter.summary(r)) from \(device.name)"
        case .didFailToContinue(let type, let code, let message):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(type ?? "?"): \(code): \(message)"
        case .streamRequested(let id, let streamID, let device):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(id) by \(device.name) (stream \(streamID))"
        case .launchRequested(let launchID, let r, let device):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(ActivityPrinter.summary(r)) from \(device.name) (launch \(launchID))"
        case .sourcesRequested(let requestID, let change):
            let what = change.map { "turn \($0.source) \($0.enabled ? "on" : "off")" } ?? "list the sources"
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(what) (request \(requestID))"
        case .pairingAvailable(let name, let address):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(name) at \(address) is pairing: `handoffctl pair` here to pair with it"
        case .pairing(let status):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(status.state.rawValue)\(status.peer.map { " with \($0.name)" } ?? "")\(status.message.map { ": \($0)" } ?? "")"
        case .clipboard(let record):
            let what = record.map { r in
                "\(r.local ? "copied here" : "copied on \(r.device.name)"): \(r.formats.map(\.type).joined(separator: ", ")) (\(r.id))"
            } ?? "nothing to paste"
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(what)"
        case .clipboardRequested(let id, let type, let streamID, let device):
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(type) of \(id) by \(device.name) (stream \(streamID))"
        case .kdeConnectPairing(let device, let state, let message):
            let what = state == "requested-by-peer"
                ? "\(device.name) asks to pair, key \(device.verificationKey ?? "?"): handoffctl kdeconnect accept|reject \(device.id)"
                : "\(device.name): \(state)\(message.map { ": \($0)" } ?? "")"
            return "\(time) \(ActivityPrinter.pad(event.name, 15))\(what)"
        case .other(let name, let body):
            return "\(time) \(ActivityPrinter.pad(name, 15))\(JSONValue.object(body).serialized())"
        }
    }
}
