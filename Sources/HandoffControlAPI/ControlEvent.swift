import HandoffCore

/// One line of the `GET /v1/events` stream. Every line is a JSON object with an `event`
/// field; clients must ignore events they do not know (peer events come later).
public enum ControlEvent: Sendable, Equatable {
    /// First line of every stream: the session token that makes this stream an owner.
    case session(token: String)
    case becameCurrent(ActivityRecord)
    case resigned(ActivityRecord)
    case updated(ActivityRecord)
    case invalidated(ActivityRecord, reason: String)
    case expired(ActivityRecord)
    /// To the owner only: refresh the payload now, answer by updating the activity.
    case willSave(activityID: ActivityID, saveID: String)
    /// Another workstation took this device's activity over.
    case wasContinued(activityID: ActivityID, device: PeerDevice)
    /// A trusted peer connected or went away.
    case peerConnected(PeerDevice)
    case peerDisconnected(PeerDevice, reason: String)
    /// A trusted peer's offer changed; nil: it offers nothing now.
    case peerOffer(PeerDevice, ActivitySummary?)
    /// Continuing started here: the payload is on its way.
    case willContinue(activityType: String, device: PeerDevice)
    /// Continuing succeeded: the payload arrived and was valid.
    case continued(ActivityRecord, device: PeerDevice)
    /// Continuing failed, and why.
    case didFailToContinue(activityType: String?, code: String, message: String)
    /// To the owner only: another workstation asks for a continuation stream. Take it
    /// with `POST /v1/streams/{streamID}/accept` (HTTP upgrade) or refuse it.
    case streamRequested(activityID: ActivityID, streamID: String, device: PeerDevice)
    /// To the launcher session only: open the app for this continued activity, then
    /// answer at `/v1/launches/{launchID}`.
    case launchRequested(launchID: String, activity: ActivityRecord, device: PeerDevice)
    /// To the launcher session only: say what the desktop sources do (after making the
    /// change, if there is one), at `/v1/source-answers/{requestID}`.
    case sourcesRequested(requestID: String, change: DesktopSourceChange?)
    /// Pairing changed (a window opened, a code is shown, paired, failed).
    case pairing(PairingStatus)
    /// A workstation on the network is pairing and this one is not: the user may open
    /// a window here to pair with it. `name` is what it advertises (unauthenticated).
    case pairingAvailable(name: String, address: String)
    /// The account's newest copy changed (nil: there is none to paste).
    case clipboard(ClipboardRecord?)
    /// To the session that announced our copy only: a paste on another workstation asks
    /// for its bytes in one format; answer like `stream-requested`.
    case clipboardRequested(clipboardID: ClipboardID, type: String, streamID: String, device: PeerDevice)
    /// A KDE Connect device's pairing changed: `state` is `requested-by-peer` (it asks:
    /// show its key, accept or reject it), `paired`, `unpaired` or `failed` (`message` says why).
    case kdeConnectPairing(KDEConnectDevice, state: String, message: String?)
    /// An event this client does not know, kept whole.
    case other(name: String, body: JSONObject)

    public var name: String {
        switch self {
        case .session: "session"
        case .becameCurrent: "became-current"
        case .resigned: "resigned"
        case .updated: "updated"
        case .invalidated: "invalidated"
        case .expired: "expired"
        case .willSave: "will-save"
        case .wasContinued: "was-continued"
        case .peerConnected: "peer-connected"
        case .peerDisconnected: "peer-disconnected"
        case .peerOffer: "peer-offer"
        case .willContinue: "will-continue"
        case .continued: "continued"
        case .didFailToContinue: "did-fail-to-continue"
        case .streamRequested: "stream-requested"
        case .launchRequested: "launch-requested"
        case .sourcesRequested: "sources-requested"
        case .pairing: "pairing"
        case .pairingAvailable: "pairing-available"
        case .clipboard: "clipboard"
        case .clipboardRequested: "clipboard-requested"
        case .kdeConnectPairing: "kdeconnect-pairing"
        case .other(let n, _): n
        }
    }

    public var json: JSONValue {
        var o: JSONObject = ["event": .string(name)]
        switch self {
        case .session(let token): o["session"] = .string(token)
        case .becameCurrent(let r), .resigned(let r), .updated(let r), .expired(let r):
            o["activity"] = r.json
        case .invalidated(let r, let reason):
            o["activity"] = r.json
            o["reason"] = .string(reason)
        case .willSave(let id, let saveID):
            o["activityID"] = .string(id.rawValue)
            o["saveID"] = .string(saveID)
        case .wasContinued(let id, let device):
            o["activityID"] = .string(id.rawValue)
            o["device"] = device.json
        case .peerConnected(let device):
            o["device"] = device.json
        case .peerDisconnected(let device, let reason):
            o["device"] = device.json
            o["reason"] = .string(reason)
        case .peerOffer(let device, let summary):
            o["device"] = device.json
            o["activity"] = summary.map { .object($0.json) } ?? .null
        case .willContinue(let type, let device):
            o["activityType"] = .string(type)
            o["device"] = device.json
        case .continued(let r, let device):
            o["activity"] = r.json
            o["device"] = device.json
        case .didFailToContinue(let type, let code, let message):
            o["activityType"] = type.map(JSONValue.string) ?? .null
            o["error"] = .object(["code": .string(code), "message": .string(message)])
        case .streamRequested(let id, let streamID, let device):
            o["activityID"] = .string(id.rawValue)
            o["streamID"] = .string(streamID)
            o["device"] = device.json
        case .launchRequested(let launchID, let r, let device):
            o["launchID"] = .string(launchID)
            o["activity"] = r.json
            o["device"] = device.json
        case .sourcesRequested(let requestID, let change):
            o["requestID"] = .string(requestID)
            o["change"] = change.map { .object(["source": .string($0.source), "enabled": .bool($0.enabled)]) } ?? .null
        case .pairing(let status):
            o["pairing"] = status.json
        case .pairingAvailable(let name, let address):
            o["name"] = .string(name)
            o["address"] = .string(address)
        case .clipboard(let record):
            o["clipboard"] = record?.json ?? .null
        case .clipboardRequested(let id, let type, let streamID, let device):
            o["clipboardID"] = .string(id.rawValue)
            o["type"] = .string(type)
            o["streamID"] = .string(streamID)
            o["device"] = device.json
        case .kdeConnectPairing(let device, let state, let message):
            o["device"] = device.json
            o["state"] = .string(state)
            o["message"] = message.map(JSONValue.string) ?? .null
        case .other(_, let body):
            for (k, v) in body.pairs where k != "event" { o[k] = v }
        }
        return .object(o)
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue, let name = o["event"]?.stringValue else {
            throw ValidationError(field: "event", problem: "missing")
        }
        func record() throws(ValidationError) -> ActivityRecord {
            guard let a = o["activity"] else { throw ValidationError(field: "activity", problem: "missing") }
            return try ActivityRecord(json: a)
        }
        switch name {
        case "session":
            guard let t = o["session"]?.stringValue else { throw ValidationError(field: "session", problem: "missing") }
            self = .session(token: t)
        case "became-current": self = .becameCurrent(try record())
        case "resigned": self = .resigned(try record())
        case "updated": self = .updated(try record())
        case "expired": self = .expired(try record())
        case "invalidated": self = .invalidated(try record(), reason: o["reason"]?.stringValue ?? "")
        case "will-save":
            guard let id = o["activityID"]?.stringValue.flatMap(ActivityID.init), let s = o["saveID"]?.stringValue else {
                throw ValidationError(field: "activityID", problem: "missing")
            }
            self = .willSave(activityID: id, saveID: s)
        case "was-continued":
            guard let id = o["activityID"]?.stringValue.flatMap(ActivityID.init) else { throw ValidationError(field: "activityID", problem: "missing") }
            self = .wasContinued(activityID: id, device: PeerDevice(json: o["device"]))
        case "peer-connected": self = .peerConnected(PeerDevice(json: o["device"]))
        case "peer-disconnected": self = .peerDisconnected(PeerDevice(json: o["device"]), reason: o["reason"]?.stringValue ?? "")
        case "peer-offer":
            var summary: ActivitySummary?
            if let a = o["activity"]?.objectValue { summary = try ActivitySummary(json: a) }
            self = .peerOffer(PeerDevice(json: o["device"]), summary)
        case "will-continue":
            self = .willContinue(activityType: o["activityType"]?.stringValue ?? "", device: PeerDevice(json: o["device"]))
        case "continued": self = .continued(try record(), device: PeerDevice(json: o["device"]))
        case "did-fail-to-continue":
            let e = o["error"]?.objectValue
            self = .didFailToContinue(activityType: o["activityType"]?.stringValue, code: e?["code"]?.stringValue ?? "",
                                      message: e?["message"]?.stringValue ?? "")
        case "stream-requested":
            guard let id = o["activityID"]?.stringValue.flatMap(ActivityID.init), let s = o["streamID"]?.stringValue else {
                throw ValidationError(field: "streamID", problem: "missing")
            }
            self = .streamRequested(activityID: id, streamID: s, device: PeerDevice(json: o["device"]))
        case "launch-requested":
            guard let launchID = o["launchID"]?.stringValue else { throw ValidationError(field: "launchID", problem: "missing") }
            self = .launchRequested(launchID: launchID, activity: try record(), device: PeerDevice(json: o["device"]))
        case "sources-requested":
            guard let requestID = o["requestID"]?.stringValue else { throw ValidationError(field: "requestID", problem: "missing") }
            var change: DesktopSourceChange?
            if let c = o["change"]?.objectValue {
                guard let source = c["source"]?.stringValue, case .bool(let enabled)? = c["enabled"] else {
                    throw ValidationError(field: "change", problem: "needs \"source\" and \"enabled\"")
                }
                change = DesktopSourceChange(source: source, enabled: enabled)
            }
            self = .sourcesRequested(requestID: requestID, change: change)
        case "pairing":
            self = .pairing(try PairingStatus(json: o["pairing"] ?? .null))
        case "pairing-available":
            self = .pairingAvailable(name: o["name"]?.stringValue ?? "", address: o["address"]?.stringValue ?? "")
        case "clipboard":
            self = .clipboard(try ClipboardRecord.newest(json: .object(o)))
        case "clipboard-requested":
            guard let id = o["clipboardID"]?.stringValue.flatMap(ClipboardID.init), let type = o["type"]?.stringValue,
                  let s = o["streamID"]?.stringValue else {
                throw ValidationError(field: "clipboardID", problem: "missing")
            }
            self = .clipboardRequested(clipboardID: id, type: type, streamID: s, device: PeerDevice(json: o["device"]))
        case "kdeconnect-pairing":
            guard let device = o["device"], device.objectValue?["id"]?.stringValue != nil, let state = o["state"]?.stringValue else {
                throw ValidationError(field: "device", problem: "missing")
            }
            self = .kdeConnectPairing(KDEConnectDevice(json: device), state: state, message: o["message"]?.stringValue)
        default:
            self = .other(name: name, body: o)
        }
    }
}
