import ArgumentParser
import HandoffControlAPI
import HandoffCore

struct KDEConnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kdeconnect",
        abstract: "Phones and KDE Connect desktops: turn it on or off, list devices, pair.",
        discussion: """
            handoff speaks the KDE Connect protocol, so the KDE Connect app on a phone (and kdeconnect, \
            GSConnect or Valent on a desktop) hands off with this workstation: a page or text shared from \
            the phone becomes an activity here that `handoffctl continue` picks up on any of your workstations. \
            It is off until you turn it on (it announces a device name on the network): \
            `handoffctl kdeconnect on`. Then pair: from the phone, and accept here after comparing the key both \
            show (`handoffctl kdeconnect list` shows it); or `handoffctl kdeconnect pair PHONE` and accept on the phone. \
            A paired phone's copies become your copy here; yours go to it only after \
            `handoffctl kdeconnect clipboard PHONE on`. A device is named by its id or its name.
            """)

    @OptionGroup var options: ClientOptions

    @Argument(help: "on, off, list (the default), pair DEVICE, accept DEVICE, reject DEVICE, unpair DEVICE, or clipboard DEVICE on|off.")
    var words: [String] = []

    static let actions = ["pair", "accept", "reject", "unpair"]

    func validate() throws {
        switch words.first {
        case nil, "list", "on", "off":
            guard words.count <= 1 else { throw ValidationError("`\(words[0])` takes nothing after it") }
        case let a? where Self.actions.contains(a):
            guard words.count == 2 else { throw ValidationError("say `handoffctl kdeconnect \(a) DEVICE` (its id or name: handoffctl kdeconnect list)") }
        case "clipboard":
            guard words.count == 3, ["on", "off"].contains(words[2]) else {
                throw ValidationError("say `handoffctl kdeconnect clipboard DEVICE on` (your copies go to it) or `off`")
            }
        case let w?:
            throw ValidationError("unknown `\(w.prefix(32))`: say on, off, list, clipboard, or one of \(Self.actions.joined(separator: ", ")) and a device")
        }
    }

    func run() async throws {
        let client = options.client
        switch words.first {
        case "on", "off":
            let status = try await client.setKDEConnect(enabled: words[0] == "on")
            if options.json { return Output.out(status.json.prettySerialized()) }
            if !status.enabled {
                Output.out("KDE Connect is off.")
            } else if status.running {
                Output.out("KDE Connect is on: listening on TCP \(status.tcpPort.map(String.init) ?? "?") and UDP \(status.udpPort.map(String.init) ?? "?"), as \"\(status.name ?? "?")\".")
            } else {
                Output.out("KDE Connect is on, but its endpoint is not running: \(status.problem ?? "it is starting").")
            }
        case "clipboard":
            let on = words[2] == "on"
            let device = try await client.kdeConnect(words[1], KDEConnectDeviceRequest(action: .clipboard, enabled: on))
            if options.json { return Output.out(device.json.prettySerialized()) }
            Output.out(on ? "Your copies go to \(device.name) from now on (not what a password manager marks secret)." : "Your copies no longer go to \(device.name).")
        case let action? where Self.actions.contains(action):
            let device = try await client.kdeConnect(words[1], KDEConnectDeviceRequest(action: KDEConnectDeviceRequest.Action(rawValue: action)!))
            if options.json { return Output.out(device.json.prettySerialized()) }
            Output.out(Self.sentence(action, device))
        default:
            let status = try await client.kdeConnect()
            if options.json { return Output.out(status.json.prettySerialized()) }
            print(status)
        }
    }

    static func sentence(_ action: String, _ d: KDEConnectDevice) -> String {
        switch action {
        case "pair" where d.paired: "Paired with \(d.name)."
        case "pair": "Asked \(d.name) to pair: accept on it if it shows the key \(d.verificationKey ?? "?")."
        case "accept": "Paired with \(d.name)."
        case "reject": "Refused \(d.name)'s request to pair."
        default: "Unpaired \(d.name)."
        }
    }

    private func print(_ status: KDEConnectStatus) {
        guard status.enabled else { return Output.out("KDE Connect is off: turn it on with `handoffctl kdeconnect on`.") }
        guard status.running else { return Output.out("KDE Connect is on, but its endpoint is not running: \(status.problem ?? "it is starting").") }
        Output.out("KDE Connect is on, as \"\(status.name ?? "?")\" (\(status.deviceID ?? "?")), on TCP \(status.tcpPort.map(String.init) ?? "?") and UDP \(status.udpPort.map(String.init) ?? "?").")
        guard !status.devices.isEmpty else {
            return Output.out("No device seen yet: open KDE Connect on the phone, on the same network.")
        }
        let width = status.devices.map(\.name.count).max() ?? 0
        for d in status.devices {
            var state = [d.paired ? "paired" : "not paired", d.reachable ? "reachable" : "not reachable"]
            if d.sendsClipboard { state.append("gets your copies") }
            switch d.pairing {
            case "requested-by-peer"?: state.append("asks to pair, key \(d.verificationKey ?? "?"): handoffctl kdeconnect accept|reject \(d.id)")
            case "requested"?: state.append("asked to pair, key \(d.verificationKey ?? "?"): accept on the device")
            default: break
            }
            Output.out("\(ActivityPrinter.pad(d.name, width + 2))\(d.type)  \(d.id)  \(state.joined(separator: ", "))")
        }
    }
}
