import HandoffClient
import HandoffControlAPI
import HandoffCore
import HandoffKDEConnect
import Logging
import NIOCore

/// The endpoint's decisions, taken one event at a time (`run`): whom to dial and admit
/// (`KDEConnectAdmission`), pairing per device (`KDEConnectPairing`), what a paired
/// device's packets become in handoff (`ShareToActivity`), and handoffd's requests.
final class KDEConnectEndpoint {
    struct Link {
        let up: LinkUp
        var identity: KDEConnectIdentity { up.identity }
        var pairing: KDEConnectPairing
        let publicKey: [UInt8]
    }

    let own: KDEConnectIdentity
    let ownPublicKey: [UInt8]
    let files: EndpointFiles
    let sockets: LanSockets
    let handoff: HandoffClient
    let bridge: BridgeWriter
    let log: Logger
    let tcpPort: Int
    let udpPort: Int
    private var admission: KDEConnectAdmission
    private var paired: [KDEConnectDeviceID: EndpointFiles.PairedDevice]
    private var links: [KDEConnectDeviceID: Link] = [:]
    private var linkNumbers: [Int: KDEConnectDeviceID] = [:]
    private var waiting: [Int: Channel] = [:]
    /// Where each connection that came in and is not linked yet came from: a device heard
    /// from there meanwhile is not dialled too (two links at once, each side keeping a
    /// different one, left none).
    private var incomingFrom: [Int: String] = [:]
    private var refusals = RefusalLog()
    /// The account's newest copy, as far as handoffd said.
    private var newestCopy: (id: ClipboardID, at: Timestamp)?
    /// The last text a device gave us and the last we gave devices: neither is passed back
    /// (a device that sets its clipboard from us may announce it again).
    private var lastFromDevice: String?
    private var lastToDevices: String?

    init(own: KDEConnectIdentity, ownPublicKey: [UInt8], files: EndpointFiles, paired: [EndpointFiles.PairedDevice], sockets: LanSockets,
         handoff: HandoffClient, bridge: BridgeWriter, log: Logger, tcpPort: Int, udpPort: Int) {
        self.own = own
        self.ownPublicKey = ownPublicKey
        self.files = files
        self.paired = Dictionary(paired.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        self.sockets = sockets
        self.handoff = handoff
        self.bridge = bridge
        self.log = log
        self.tcpPort = tcpPort
        self.udpPort = udpPort
        admission = KDEConnectAdmission(own: own.deviceID)
    }

    func run(_ events: EndpointEvents) async {
        for await event in events.stream {
            if case .handoffdGone = event { break }
            await handle(event, events)
        }
    }

    private func handle(_ event: EndpointEvent, _ events: EndpointEvents) async {
        let now = SystemClock.now()
        switch event {
        case .heard(let identity, let host):
            if incomingFrom.values.contains(host) {
                log.debug("not dialling a device heard by UDP: a connection from its address is on its way to a link", metadata: ["device": "\(identity.deviceID)", "from": "\(host)"])
                return
            }
            if let refusal = admission.heard(identity, pairedVersion: paired[identity.deviceID]?.protocolVersion) {
                if refusal != .ourselves && refusal != .linked && refusal != .dialling {
                    refusals.refused("not dialling a device heard by UDP", ["device": "\(identity.deviceID)", "from": "\(host)", "why": "\(refusal)"], at: now, log)
                }
                return
            }
            log.debug("dialling a device heard by UDP", metadata: ["device": "\(identity.deviceID)", "at": "\(host):\(identity.tcpPort ?? 0)"])
            sockets.dial(identity, host: host, own: own)
        case .accepted(let number, let channel):
            guard admission.accepted(number, at: now) else {
                refusals.refused("closing a connection: too many are waiting for their identity", ["from": "\(channel.remoteAddress?.description ?? "?")"], at: now, log)
                channel.close(promise: nil)
                return
            }
            waiting[number] = channel
            incomingFrom[number] = channel.remoteAddress?.ipAddress
        case .foundByMDNS(let id, let address):
            // Not at once: a device that just heard our broadcast is dialling us already,
            // and a second link at the same moment is what to avoid.
            log.info("a KDE Connect device found by mDNS", metadata: ["device": "\(id)", "at": "\(address)"])
            announce(to: id, at: address, after: 2_000_000_000, events)
        case .announceTo(let id, let address):
            guard links[id] == nil, !admission.dialling.contains(id), !incomingFrom.values.contains(address) else { return }
            log.debug("sending a device our identity", metadata: ["device": "\(id)", "at": "\(address)"])
            sockets.broadcast(own, to: [address])
        case .identified(let number):
            // Still counted as pending until linked or closed: a TLS handshake is part of
            // the 1 s (KDE's timer runs until it is encrypted).
            _ = number
        case .linked(let up):
            linkUp(up, now: now)
        case .packet(_, let id, let packet):
            await received(packet, from: id, now: now, events)
        case .unreadable(_, let id, let why):
            log.info("skipping a packet that cannot be read", metadata: ["device": "\(id)", "why": "\(why)"])
        case .closed(let number, let id, let dialled):
            closed(number, id, dialled: dialled, events)
        case .refused(let number, let id, let why):
            if let id {
                // Past its plain identity: a device that said who it is, refused for what it did.
                refusals.refused("refusing a KDE Connect device", ["connection": "\(number)", "device": "\(id)", "why": "\(why)"], at: now, log)
            } else {
                refusals.refused("closing a KDE Connect connection", ["connection": "\(number)", "why": "\(why)"], at: now, log)
            }
        case .dialFailed(let id, let why):
            admission.dialEnded(id)
            refusals.refused("could not reach a device heard by UDP", ["device": "\(id)", "why": "\(why)"], at: now, log)
        case .pairingDue(let id):
            guard var link = links[id] else { return }
            let actions = link.pairing.timeDue(at: now)
            links[id] = link
            perform(actions, on: id, events)
        case .request(let rid, "send", let fields):
            startSending(rid, fields, events)
        case .request(let rid, let op, let fields):
            let result = await request(op, fields, now: now, events)
            bridge.send(.reply(id: rid, result: result))
        case .send(let rid, let id, let found):
            bridge.send(.reply(id: rid, result: found.flatMap { share in
                guard links[id] != nil, paired[id] != nil else {
                    return .failure(HandoffError(.unavailable, code: "unreachable", message: "\(device(id).name) is no longer reachable"))
                }
                write(share.packet, to: id)
                log.info("sent an activity to a device", metadata: ["device": "\(id)", "activity": "\(share.activity)"])
                return .success(KDEConnectSent(device: device(id), activity: share.activity, url: share.url, text: share.text).json)
            }))
        case .clipboardChanged(let record, let baseline):
            clipboardChanged(record, baseline: baseline, events)
        case .clipboardText(let id, let text):
            guard newestCopy?.id == id, text != lastFromDevice else { return }
            let targets = clipboardTargets
            guard !targets.isEmpty else { return }
            lastToDevices = text
            for target in targets { write(DeviceClipboard.packet(text), to: target) }
            log.info("sent the clipboard to devices", metadata: ["devices": "\(targets.count)", "bytes": "\(text.utf8.count)"])
        case .handoffdGone:
            break
        }
    }

    // MARK: - The clipboard

    /// Linked, paired devices the user sends this workstation's copies to.
    private var clipboardTargets: [KDEConnectDeviceID] {
        links.keys.filter { paired[$0]?.sendClipboard == true }.sorted()
    }

    private func clipboardChanged(_ record: ClipboardRecord?, baseline: Bool, _ events: EndpointEvents) {
        guard let record else {
            newestCopy = nil
            return
        }
        guard record.id != newestCopy?.id else { return }
        newestCopy = (record.id, record.copiedAt)
        guard !baseline, !clipboardTargets.isEmpty, let type = DeviceClipboard.textFormat(of: record) else { return }
        let handoff = self.handoff
        let log = self.log
        Task {
            do {
                if let text = try await DeviceClipboard.paste(record.id, type: type, through: handoff) {
                    events.send(.clipboardText(record.id, text))
                }
            } catch {
                log.info("the copy to send to devices could not be pasted", metadata: ["error": "\(error)"])
            }
        }
    }

    private func clipboardFromDevice(_ packet: KDEConnectPacket, from id: KDEConnectDeviceID) {
        guard let text = DeviceClipboard.text(of: packet, newestCopy: newestCopy?.at), text != lastToDevices, text != lastFromDevice else { return }
        lastFromDevice = text
        let handoff = self.handoff
        let log = self.log
        Task {
            do {
                try await DeviceClipboard.copy(text, through: handoff)
                log.info("a device's clipboard is the account's copy", metadata: ["device": "\(id)", "bytes": "\(text.utf8.count)"])
            } catch {
                log.warning("a device's clipboard could not be copied", metadata: ["device": "\(id)", "error": "\(error)"])
            }
        }
    }

    // MARK: - Links

    private func linkUp(_ up: LinkUp, now: Timestamp) {
        let id = up.identity.deviceID
        admission.identified(up.number)
        waiting[up.number] = nil
        incomingFrom[up.number] = nil
        if up.dialled { admission.dialEnded(id) }
        // A second link to a device already linked replaces the first if it showed the
        // same certificate (a device that reconnected); otherwise it is refused.
        if let old = links[id] {
            guard old.up.certificate == up.certificate else {
                log.warning("refusing a second link to a device with another certificate", metadata: ["device": "\(id)"])
                up.channel.close(promise: nil)
                return
            }
            linkNumbers[old.up.number] = nil
            links[id] = nil
            admission.linkDown(id)
            old.up.channel.close(promise: nil)
        }
        let pairedDevice = paired[id]
        if let refusal = admission.linkUp(id, version: up.identity.protocolVersion, pairedVersion: pairedDevice?.protocolVersion) {
            log.info("refusing a link", metadata: ["device": "\(id)", "why": "\(refusal)"])
            up.channel.close(promise: nil)
            return
        }
        let publicKey: [UInt8]
        do { publicKey = try KDEConnectCertificate.publicKeyDER(ofCertificate: up.certificate) } catch {
            log.info("refusing a link: its certificate has no readable key", metadata: ["device": "\(id)"])
            admission.linkDown(id)
            up.channel.close(promise: nil)
            return
        }
        let version = min(up.identity.protocolVersion, own.protocolVersion)
        links[id] = Link(up: up, pairing: KDEConnectPairing(paired: pairedDevice != nil, protocolVersion: version), publicKey: publicKey)
        linkNumbers[up.number] = id
        setLimit(up, paired: pairedDevice != nil)
        if var device = pairedDevice, device.name != up.identity.name || device.type != up.identity.type || device.protocolVersion < up.identity.protocolVersion {
            // Only what came over the link renames a paired device (CVE-2025-32900).
            device.name = up.identity.name
            device.type = up.identity.type
            device.protocolVersion = max(device.protocolVersion, up.identity.protocolVersion)
            paired[id] = device
            saveDevices()
        }
        log.info("linked", metadata: ["device": "\(id)", "name": "\(up.identity.name)", "protocol": "\(up.identity.protocolVersion)",
                                      "paired": "\(pairedDevice != nil)", "address": "\(up.address ?? "?")"])
        bridge.send(.notice("device-reachable", ["device": device(id).json]))
    }

    private func closed(_ number: Int, _ id: KDEConnectDeviceID?, dialled: KDEConnectDeviceID?, _ events: EndpointEvents) {
        if waiting.removeValue(forKey: number) != nil { admission.identified(number) }
        incomingFrom[number] = nil
        if let dialled, linkNumbers[number] == nil { admission.dialEnded(dialled) }
        guard let id, linkNumbers.removeValue(forKey: number) != nil else { return }
        let address = links[id]?.up.address
        links[id] = nil
        admission.linkDown(id)
        log.info("link closed", metadata: ["device": "\(id)"])
        // The device may still be there (its side closed the link, or kept another one):
        // once, a moment later, it is sent our identity to dial us again.
        if let address { announce(to: id, at: address, after: 2_000_000_000, events) }
    }

    private func announce(to id: KDEConnectDeviceID, at address: String, after nanoseconds: UInt64, _ events: EndpointEvents) {
        Task {
            try? await Task.sleep(nanoseconds: nanoseconds)
            events.send(.announceTo(id, address: address))
        }
    }

    private func setLimit(_ up: LinkUp, paired: Bool) {
        let limit = up.limit
        let bytes = paired ? KDEConnectLimits.pairedPacketBytes : KDEConnectLimits.unpairedPacketBytes
        up.channel.eventLoop.execute { limit.bytes = bytes }
    }

    private func write(_ packet: KDEConnectPacket, to id: KDEConnectDeviceID) {
        guard let link = links[id] else { return }
        let channel = link.up.channel
        channel.writeAndFlush(channel.allocator.buffer(bytes: packet.encoded(id: KDEConnectLinkHandler.packetID())), promise: nil)
    }

    // MARK: - Packets

    private func received(_ packet: KDEConnectPacket, from id: KDEConnectDeviceID, now: Timestamp, _ events: EndpointEvents) async {
        guard var link = links[id] else { return }
        if packet.type == KDEConnectPacket.pair {
            log.debug("a pairing packet", metadata: ["device": "\(id)", "body": "\(JSONValue.object(packet.body).serialized())"])
            let actions = link.pairing.received(packet, at: now)
            links[id] = link
            perform(actions, on: id, events)
            return
        }
        guard paired[id] != nil else {
            // A device not paired may only pair (KDE answers it with an unpair).
            log.info("ignoring a packet from a device not paired", metadata: ["device": "\(id)", "type": "\(packet.type)"])
            return
        }
        switch packet.type {
        case "kdeconnect.share.request":
            await share(packet, from: link.identity)
        case "kdeconnect.clipboard", "kdeconnect.clipboard.connect":
            clipboardFromDevice(packet, from: id)
        case "kdeconnect.ping":
            log.debug("ping", metadata: ["device": "\(id)"])
        default:
            log.debug("ignoring a packet this endpoint does not handle", metadata: ["device": "\(id)", "type": "\(packet.type)"])
        }
    }

    /// A URL or text shared from the device becomes its activity here, offered to the
    /// account like any other (`ShareToActivity`).
    private func share(_ packet: KDEConnectPacket, from device: KDEConnectIdentity) async {
        guard let draft = ShareToActivity.draft(packet, from: device.name) else {
            log.info("ignoring a share this endpoint cannot offer (a file, or nothing)", metadata: ["device": "\(device.deviceID)"])
            return
        }
        do {
            let record = try await handoff.becomeCurrent(draft)
            log.info("a share became the current activity", metadata: ["device": "\(device.deviceID)", "activity": "\(record.activity.id)"])
        } catch {
            log.warning("a share could not become an activity", metadata: ["device": "\(device.deviceID)", "error": "\(error)"])
        }
    }

    // MARK: - Pairing

    private func perform(_ actions: [KDEConnectPairing.Action], on id: KDEConnectDeviceID, _ events: EndpointEvents) {
        for action in actions {
            switch action {
            case .send(let pair, let timestamp):
                var body: JSONObject = ["pair": .bool(pair)]
                if let timestamp { body["timestamp"] = .integer(timestamp) }
                write(KDEConnectPacket(type: KDEConnectPacket.pair, body: body), to: id)
                if pair, case .requested? = links[id]?.pairing.state { scheduleDue(id, events) }
            case .askUser:
                scheduleDue(id, events)
                log.info("pairing requested by a device", metadata: ["device": "\(id)", "key": "\(verificationKey(id) ?? "?")"])
                bridge.send(.notice("pairing-requested", ["device": device(id).json]))
            case .paired:
                guard let link = links[id] else { continue }
                paired[id] = EndpointFiles.PairedDevice(id: id, name: link.identity.name, type: link.identity.type,
                                                        protocolVersion: link.identity.protocolVersion, certificate: link.up.certificate,
                                                        sendClipboard: paired[id]?.sendClipboard ?? false)
                sockets.tls.pinned.withLockedValue { $0[id] = link.up.certificate }
                admission.pairingChanged(id, paired: true)
                setLimit(link.up, paired: true)
                saveDevices()
                log.info("paired", metadata: ["device": "\(id)", "name": "\(link.identity.name)"])
                bridge.send(.notice("paired", ["device": device(id).json]))
            case .unpaired:
                paired[id] = nil
                sockets.tls.pinned.withLockedValue { $0[id] = nil }
                admission.pairingChanged(id, paired: false)
                if let link = links[id] { setLimit(link.up, paired: false) }
                saveDevices()
                log.info("unpaired", metadata: ["device": "\(id)"])
                bridge.send(.notice("unpaired", ["device": device(id).json]))
            case .failed(let why):
                log.info("pairing did not happen", metadata: ["device": "\(id)", "why": "\(why)"])
                bridge.send(.notice("pairing-failed", ["device": device(id).json, "message": .string(why)]))
            }
        }
    }

    private func scheduleDue(_ id: KDEConnectDeviceID, _ events: EndpointEvents) {
        Task {
            try? await Task.sleep(nanoseconds: UInt64(KDEConnectLimits.pairingTimeoutNanoseconds) + 50_000_000)
            events.send(.pairingDue(id))
        }
    }

    private func saveDevices() {
        do { try files.saveDevices(Array(paired.values)) } catch {
            log.error("the paired devices could not be saved", metadata: ["error": "\(error)"])
        }
    }

    private func verificationKey(_ id: KDEConnectDeviceID) -> String? {
        guard let link = links[id] else { return nil }
        switch link.pairing.state {
        case .requested, .requestedByPeer:
            return KDEConnectVerificationKey.make(ours: ownPublicKey, theirs: link.publicKey, timestamp: link.pairing.timestamp)
        default:
            return nil
        }
    }

    // MARK: - What handoffd asks

    func device(_ id: KDEConnectDeviceID) -> KDEConnectDevice {
        let link = links[id]
        let stored = paired[id]
        let pairing: String? = switch link?.pairing.state {
        case .requested?: "requested"
        case .requestedByPeer?: "requested-by-peer"
        default: nil
        }
        return KDEConnectDevice(id: id.rawValue, name: link?.identity.name ?? stored?.name ?? id.rawValue,
                                type: (link?.identity.type ?? stored?.type ?? .unknown).rawValue,
                                protocolVersion: link?.identity.protocolVersion ?? stored?.protocolVersion ?? 0,
                                paired: stored != nil, reachable: link != nil, address: link?.up.address,
                                pairing: pairing, verificationKey: verificationKey(id), sendsClipboard: stored?.sendClipboard ?? false)
    }

    func status() -> KDEConnectStatus {
        let ids = Set(links.keys).union(paired.keys).sorted()
        return KDEConnectStatus(enabled: true, running: true, deviceID: own.deviceID.rawValue, name: own.name, tcpPort: tcpPort, udpPort: udpPort,
                                devices: ids.map(device))
    }

    private func named(_ fields: JSONObject) -> Result<KDEConnectDeviceID, HandoffError> {
        guard let name = fields["device"]?.stringValue else { return .failure(.badRequest("name a device")) }
        return status().device(named: name).flatMap { d in KDEConnectDeviceID(d.id).map { .success($0) } ?? .failure(.notFound("no device \(d.id)")) }
    }

    /// `send`: the activity is looked up through the local API on its own task (it may be
    /// fetched from another workstation); the packet leaves when it is back (`.send`).
    private func startSending(_ rid: Int64, _ fields: JSONObject, _ events: EndpointEvents) {
        let id: KDEConnectDeviceID
        switch named(fields) {
        case .success(let d): id = d
        case .failure(let e): return bridge.send(.reply(id: rid, result: .failure(e)))
        }
        guard links[id] != nil else {
            return bridge.send(.reply(id: rid, result: .failure(HandoffError(.unavailable, code: "unreachable",
                message: "\(device(id).name) is not reachable now: open KDE Connect on it, on the same network"))))
        }
        guard paired[id] != nil else {
            return bridge.send(.reply(id: rid, result: .failure(HandoffError(.conflict, code: "not_paired",
                message: "\(device(id).name) is not paired: pair first (handoffctl kdeconnect pair \(id))"))))
        }
        let which = fields["activity"]?.stringValue ?? "current"
        let handoff = self.handoff
        Task {
            let found: Result<ShareToDevice, HandoffError>
            do { found = .success(try await ShareToDevice.find(which, through: handoff)) } catch let e as HandoffError { found = .failure(e) } catch {
                found = .failure(HandoffError(.internal, code: "internal", message: "\(error)"))
            }
            events.send(.send(requestID: rid, device: id, found))
        }
    }

    private func request(_ op: String, _ fields: JSONObject, now: Timestamp, _ events: EndpointEvents) async -> Result<JSONValue, HandoffError> {
        if op == "status" { return .success(status().json) }
        let id: KDEConnectDeviceID
        switch named(fields) {
        case .success(let d): id = d
        case .failure(let e): return .failure(e)
        }
        if op == "clipboard" {
            guard case .bool(let on)? = fields["enabled"] else { return .failure(.badRequest("say whether to send the clipboard")) }
            guard var device = paired[id] else {
                return .failure(HandoffError(.conflict, code: "not_paired", message: "\(self.device(id).name) is not paired: pair first (handoffctl kdeconnect pair \(id))"))
            }
            device.sendClipboard = on
            paired[id] = device
            saveDevices()
            return .success(self.device(id).json)
        }
        let actions: [KDEConnectPairing.Action]
        switch op {
        case "pair", "accept", "reject":
            guard var link = links[id] else {
                return .failure(HandoffError(.unavailable, code: "unreachable", message: "\(device(id).name) is not reachable now: open KDE Connect on it, on the same network"))
            }
            actions = switch op {
            case "pair": link.pairing.request(at: now)
            case "accept": link.pairing.accept(at: now)
            default: link.pairing.reject()
            }
            links[id] = link
        case "unpair":
            if var link = links[id] {
                actions = link.pairing.unpair()
                links[id] = link
            } else if paired[id] != nil {
                actions = [.unpaired]
            } else {
                actions = []
            }
        default:
            return .failure(.badRequest("no operation \(op.prefix(32))"))
        }
        if case .failed(let why)? = actions.first, actions.count == 1 {
            return .failure(HandoffError(.conflict, code: "pairing", message: "\(device(id).name): \(why)"))
        }
        perform(actions, on: id, events)
        return .success(device(id).json)
    }
}
