import HandoffCore

/// A KDE Connect device (a phone, or a desktop running kdeconnect, GSConnect or Valent) as
/// `GET /v1/kdeconnect` lists it. What it says of itself came over its link, never by UDP.
public struct KDEConnectDevice: Sendable, Equatable {
    public var id: String
    public var name: String
    /// desktop, laptop, phone, tablet, tv or unknown.
    public var type: String
    public var protocolVersion: Int
    public var paired: Bool
    /// Linked now (a TLS connection is up).
    public var reachable: Bool
    public var address: String?
    /// A request under way: `requested` (this side asked: accept it on the device) or
    /// `requested-by-peer` (the device asked: `handoffctl kdeconnect accept` or `reject`).
    public var pairing: String?
    /// While a request is under way: the key both sides show, to compare before accepting.
    public var verificationKey: String?
    /// A paired device this workstation's copies go to (`handoffctl kdeconnect clipboard
    /// DEVICE on`); its own copies come here whether or not.
    public var sendsClipboard: Bool

    public init(id: String, name: String, type: String, protocolVersion: Int, paired: Bool, reachable: Bool,
                address: String? = nil, pairing: String? = nil, verificationKey: String? = nil, sendsClipboard: Bool = false) {
        self.id = id
        self.name = name
        self.type = type
        self.protocolVersion = protocolVersion
        self.paired = paired
        self.reachable = reachable
        self.address = address
        self.pairing = pairing
        self.verificationKey = verificationKey
        self.sendsClipboard = sendsClipboard
    }

    public init(json: JSONValue) {
        let o = json.objectValue ?? [:]
        id = o["id"]?.stringValue ?? ""
        name = o["name"]?.stringValue ?? ""
        type = o["type"]?.stringValue ?? "unknown"
        if case .integer(let v)? = o["protocolVersion"] { protocolVersion = Int(clamping: v) } else { protocolVersion = 0 }
        paired = o["paired"] == .bool(true)
        reachable = o["reachable"] == .bool(true)
        address = o["address"]?.stringValue
        pairing = o["pairing"]?.stringValue
        verificationKey = o["verificationKey"]?.stringValue
        sendsClipboard = o["sendsClipboard"] == .bool(true)
    }

    public var json: JSONValue {
        .object([
            "id": .string(id), "name": .string(name), "type": .string(type), "protocolVersion": .integer(Int64(protocolVersion)),
            "paired": .bool(paired), "reachable": .bool(reachable), "address": address.map(JSONValue.string) ?? .null,
            "pairing": pairing.map(JSONValue.string) ?? .null, "verificationKey": verificationKey.map(JSONValue.string) ?? .null,
            "sendsClipboard": .bool(sendsClipboard),
        ])
    }
}

/// `GET /v1/kdeconnect`: whether the endpoint is turned on and running, who it is on the
/// network, where it listens, and the devices it knows.
public struct KDEConnectStatus: Sendable, Equatable {
    public var enabled: Bool
    public var running: Bool
    /// This workstation's KDE Connect device id (its own, not handoff's device ID).
    public var deviceID: String?
    public var name: String?
    public var tcpPort: Int?
    public var udpPort: Int?
    public var devices: [KDEConnectDevice]
    /// Why it is not running although turned on, if it is not.
    public var problem: String?

    public init(enabled: Bool, running: Bool, deviceID: String? = nil, name: String? = nil, tcpPort: Int? = nil, udpPort: Int? = nil,
                devices: [KDEConnectDevice] = [], problem: String? = nil) {
        self.enabled = enabled
        self.running = running
        self.deviceID = deviceID
        self.name = name
        self.tcpPort = tcpPort
        self.udpPort = udpPort
        self.devices = devices
        self.problem = problem
    }

    public init(json: JSONValue) {
        let o = json.objectValue ?? [:]
        enabled = o["enabled"] == .bool(true)
        running = o["running"] == .bool(true)
        deviceID = o["deviceID"]?.stringValue
        name = o["name"]?.stringValue
        if case .integer(let p)? = o["tcpPort"] { tcpPort = Int(clamping: p) }
        if case .integer(let p)? = o["udpPort"] { udpPort = Int(clamping: p) }
        if case .array(let a)? = o["devices"] { devices = a.map(KDEConnectDevice.init(json:)) } else { devices = [] }
        problem = o["problem"]?.stringValue
    }

    public var json: JSONValue {
        .object([
            "enabled": .bool(enabled), "running": .bool(running), "deviceID": deviceID.map(JSONValue.string) ?? .null,
            "name": name.map(JSONValue.string) ?? .null, "tcpPort": tcpPort.map { .integer(Int64($0)) } ?? .null,
            "udpPort": udpPort.map { .integer(Int64($0)) } ?? .null, "devices": .array(devices.map(\.json)),
            "problem": problem.map(JSONValue.string) ?? .null,
        ])
    }

    /// The device a user named: its id, else its name (ignoring case) if only one has it.
    public func device(named text: String) -> Result<KDEConnectDevice, HandoffError> {
        if let d = devices.first(where: { $0.id == text }) { return .success(d) }
        let named = devices.filter { $0.name.lowercased() == text.lowercased() }
        if named.count == 1 { return .success(named[0]) }
        if named.count > 1 {
            return .failure(HandoffError(.conflict, code: "ambiguous_device",
                                         message: "\(named.count) KDE Connect devices are called \"\(text)\": name one by its id (handoffctl kdeconnect list)"))
        }
        return .failure(HandoffError(.notFound, code: "unknown_device",
                                     message: "no KDE Connect device \"\(text.prefix(64))\" is known: handoffctl kdeconnect list shows the devices seen (is KDE Connect open on it, on the same network?)"))
    }
}

/// `POST /v1/kdeconnect`: turn the endpoint on or off, for good (it stays so across restarts).
public struct SetKDEConnectRequest: Sendable, Equatable {
    public var enabled: Bool

    public init(enabled: Bool) { self.enabled = enabled }

    public var json: JSONValue { .object(["enabled": .bool(enabled)]) }

    public init(body: JSONObject) throws(HandoffError) {
        guard let enabled = try RequestBody.read(body, { r throws(ValidationError) in try r.bool("enabled") }) else {
            throw .badRequest("say {\"enabled\": true} or {\"enabled\": false}")
        }
        self.enabled = enabled
    }
}

/// `POST /v1/kdeconnect/devices/{device}`: what to do with one device (its id or name).
/// `send` sends it an activity (`activity`: an id, or `current`, the default): its web page,
/// else its text. `clipboard` with `enabled` says whether this workstation's copies go to it.
public struct KDEConnectDeviceRequest: Sendable, Equatable {
    public enum Action: String, Sendable, CaseIterable {
        case pair, accept, reject, unpair, send, clipboard
    }

    public var action: Action
    public var activity: String?
    public var enabled: Bool?

    public init(action: Action, activity: String? = nil, enabled: Bool? = nil) {
        self.action = action
        self.activity = activity
        self.enabled = enabled
    }

    public var json: JSONValue {
        var o: JSONObject = ["action": .string(action.rawValue)]
        if let activity { o["activity"] = .string(activity) }
        if let enabled { o["enabled"] = .bool(enabled) }
        return .object(o)
    }

    public init(body: JSONObject) throws(HandoffError) {
        let (text, activity, enabled) = try RequestBody.read(body) { r throws(ValidationError) in
            (try r.requiredString("action"), try r.string("activity"), try r.bool("enabled"))
        }
        guard let action = Action(rawValue: text) else {
            throw .badRequest("body.action: must be one of \(Action.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard activity == nil || action == .send else { throw .badRequest("body.activity: only with \"send\"") }
        guard (enabled != nil) == (action == .clipboard) else { throw .badRequest("body.enabled: with \"clipboard\", and only with it") }
        self.action = action
        self.activity = activity
        self.enabled = enabled
    }
}

/// What `POST /v1/kdeconnect/devices/{device}` with `"send"` sent: the activity's web page,
/// else its text.
public struct KDEConnectSent: Sendable, Equatable {
    public var device: KDEConnectDevice
    public var activity: String
    public var url: String?
    public var text: String?

    public init(device: KDEConnectDevice, activity: String, url: String? = nil, text: String? = nil) {
        self.device = device
        self.activity = activity
        self.url = url
        self.text = text
    }

    public init(json: JSONValue) {
        let o = json.objectValue ?? [:]
        device = KDEConnectDevice(json: o["device"] ?? .null)
        activity = o["activity"]?.stringValue ?? ""
        url = o["url"]?.stringValue
        text = o["text"]?.stringValue
    }

    public var json: JSONValue {
        .object(["device": device.json, "activity": .string(activity), "url": url.map(JSONValue.string) ?? .null,
                 "text": text.map(JSONValue.string) ?? .null])
    }
}
