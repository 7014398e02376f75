import HandoffCore

/// Where pairing stands on this workstation (`GET /v1/pairing`, the `pairing` event).
public struct PairingStatus: Sendable, Equatable {
    public enum State: String, Sendable {
        /// No pairing window is open.
        case closed
        /// The window is open: looking for the other workstation, or waiting for it to dial.
        case waiting
        /// Connected to the other workstation; the code is being worked out.
        case exchanging
        /// Both sides show `code`; waiting for the users to confirm.
        case code
        /// Done: the two trust each other.
        case paired
        /// The last attempt failed (`message` says why); the window may still be open.
        case failed
    }

    public var state: State
    public var expiresAt: Timestamp?
    public var code: String?
    public var peer: PeerDevice?
    public var peerAddress: String?
    public var confirmedHere = false
    public var confirmedThere = false
    public var message: String?

    public init(state: State, expiresAt: Timestamp? = nil, code: String? = nil, peer: PeerDevice? = nil, peerAddress: String? = nil,
                confirmedHere: Bool = false, confirmedThere: Bool = false, message: String? = nil) {
        self.state = state
        self.expiresAt = expiresAt
        self.code = code
        self.peer = peer
        self.peerAddress = peerAddress
        self.confirmedHere = confirmedHere
        self.confirmedThere = confirmedThere
        self.message = message
    }

    public var json: JSONValue {
        .object([
            "state": .string(state.rawValue), "expiresAt": expiresAt.map { .string($0.rfc3339) } ?? .null,
            "code": code.map(JSONValue.string) ?? .null, "peer": peer?.json ?? .null, "peerAddress": peerAddress.map(JSONValue.string) ?? .null,
            "confirmedHere": .bool(confirmedHere), "confirmedThere": .bool(confirmedThere), "message": message.map(JSONValue.string) ?? .null,
        ])
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue, let s = o["state"]?.stringValue, let state = State(rawValue: s) else {
            throw ValidationError(field: "state", problem: "missing or unknown")
        }
        self.init(state: state, expiresAt: o["expiresAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:)), code: o["code"]?.stringValue,
                  peer: o["peer"].flatMap { $0 == .null ? nil : PeerDevice(json: $0) }, peerAddress: o["peerAddress"]?.stringValue,
                  confirmedHere: o["confirmedHere"] == .bool(true), confirmedThere: o["confirmedThere"] == .bool(true),
                  message: o["message"]?.stringValue)
    }
}
