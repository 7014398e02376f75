import HandoffCore

/// What a `kdeconnect.identity` packet says of its device. Read by the rules of
/// kdeconnect-kde's DeviceInfo and LanLinkProvider, with the limits of its CVEs: an id by
/// `KDEConnectDeviceID`'s rule, a name filtered as KDE filters it (and refused if nothing is
/// left), a TCP port only in 1716–1764, capabilities bounded.
public struct KDEConnectIdentity: Sendable, Equatable {
    public var deviceID: KDEConnectDeviceID
    public var name: String
    public var type: DeviceType
    public var protocolVersion: Int
    /// Where it listens: in a UDP identity, or the plain one a connecting device writes.
    /// The identity inside TLS (v8) has none.
    public var tcpPort: Int?
    public var incomingCapabilities: [String]
    public var outgoingCapabilities: [String]
    /// v8, in the plain identity of the device that connects: whom it meant, and in which
    /// version (a listener that is not that device, or not that version, closes).
    public var targetDeviceID: String?
    public var targetProtocolVersion: Int?

    public enum DeviceType: String, Sendable, Equatable, CaseIterable {
        case desktop, laptop, phone, tablet, tv, unknown
    }

    public init(deviceID: KDEConnectDeviceID, name: String, type: DeviceType, protocolVersion: Int, tcpPort: Int? = nil,
                incomingCapabilities: [String] = [], outgoingCapabilities: [String] = []) {
        self.deviceID = deviceID
        self.name = name
        self.type = type
        self.protocolVersion = protocolVersion
        self.tcpPort = tcpPort
        self.incomingCapabilities = incomingCapabilities
        self.outgoingCapabilities = outgoingCapabilities
    }

    /// Reads an identity packet. `needsPort`: a UDP identity, whose port is dialled, must
    /// name one in KDE Connect's range.
    public init(_ packet: KDEConnectPacket, needsPort: Bool) throws(KDEConnectError) {
        guard packet.type == KDEConnectPacket.identity else { throw KDEConnectError("a \(packet.type) packet where an identity was due") }
        let body = packet.body
        guard let idText = body["deviceId"]?.stringValue, let id = KDEConnectDeviceID(idText) else {
            throw KDEConnectError("an identity whose device id is not 32 to 38 of [a-zA-Z0-9_-]")
        }
        let name = Self.filterName(body["deviceName"]?.stringValue ?? "")
        guard !name.isEmpty else { throw KDEConnectError("an identity of \(id) without a name") }
        guard case .integer(let version)? = body["protocolVersion"], version > 0, version < 1000 else {
            throw KDEConnectError("an identity of \(id) without a protocol version")
        }
        deviceID = id
        self.name = name
        type = body["deviceType"]?.stringValue.map(Self.deviceType) ?? .unknown
        protocolVersion = Int(version)
        switch body["tcpPort"] {
        case .integer(let port)? where KDEConnectLimits.ports.contains(Int(clamping: port)):
            tcpPort = Int(port)
        case nil where !needsPort:
            tcpPort = nil
        default:
            throw KDEConnectError("an identity of \(id) whose TCP port is not in \(KDEConnectLimits.ports)")
        }
        incomingCapabilities = try Self.capabilities(body["incomingCapabilities"], of: id)
        outgoingCapabilities = try Self.capabilities(body["outgoingCapabilities"], of: id)
        targetDeviceID = body["targetDeviceId"]?.stringValue
        if case .integer(let v)? = body["targetProtocolVersion"] { targetProtocolVersion = Int(clamping: v) }
    }

    /// The identity packet to send. `tcpPort`: in the UDP and plain identities; `target`:
    /// in the plain one a v8 device writes when it connects.
    public func packet() -> KDEConnectPacket {
        var body: JSONObject = [
            "deviceId": .string(deviceID.rawValue), "deviceName": .string(name), "deviceType": .string(type.rawValue),
            "protocolVersion": .integer(Int64(protocolVersion)),
            "incomingCapabilities": .array(incomingCapabilities.map { .string($0) }),
            "outgoingCapabilities": .array(outgoingCapabilities.map { .string($0) }),
        ]
        if let tcpPort { body["tcpPort"] = .integer(Int64(tcpPort)) }
        if let targetDeviceID { body["targetDeviceId"] = .string(targetDeviceID) }
        if let targetProtocolVersion { body["targetProtocolVersion"] = .integer(Int64(targetProtocolVersion)) }
        return KDEConnectPacket(type: KDEConnectPacket.identity, body: body)
    }

    /// The identity sent again inside TLS (v8) is the one that counts, and only if it is
    /// the same device in the same version as the plain one, and the certificate's CN is its
    /// id (CVE-2025-66270: kdeconnect before 25.12 took a different id from inside TLS).
    public static func secure(_ inside: KDEConnectIdentity, plain: KDEConnectIdentity, certificateCN: String?) throws(KDEConnectError) -> KDEConnectIdentity {
        guard inside.deviceID == plain.deviceID else {
            throw KDEConnectError("the device id changed across TLS: \(plain.deviceID) then \(inside.deviceID)")
        }
        guard inside.protocolVersion == plain.protocolVersion else {
            throw KDEConnectError("\(plain.deviceID): the protocol version changed across TLS: \(plain.protocolVersion) then \(inside.protocolVersion)")
        }
        try checkCertificate(of: plain.deviceID, cn: certificateCN)
        var identity = inside
        identity.tcpPort = plain.tcpPort
        return identity
    }

    /// A device's certificate must name it (CN = its id), paired or not.
    public static func checkCertificate(of id: KDEConnectDeviceID, cn: String?) throws(KDEConnectError) {
        guard cn == id.rawValue else {
            throw KDEConnectError("\(id): its certificate names \(cn.map { "\"\($0)\"" } ?? "no one")")
        }
    }

    /// KDE's DeviceInfo.filterName: these characters removed, then the first 32 characters.
    public static func filterName(_ name: String) -> String {
        let forbidden: Set<Character> = ["\"", "'", ",", ";", ":", ".", "!", "?", "(", ")", "[", "]", "<", ">"]
        // Control characters too: a name is shown in notifications, menus and logs.
        let kept = name.filter { c in !forbidden.contains(c) && !c.unicodeScalars.contains { $0.properties.generalCategory == .control } }
        return String(kept.prefix(32)).trimmingSpaces()
    }

    static func deviceType(_ text: String) -> DeviceType {
        text == "smartphone" ? .phone : DeviceType(rawValue: text) ?? .unknown
    }

    static func capabilities(_ value: JSONValue?, of id: KDEConnectDeviceID) throws(KDEConnectError) -> [String] {
        guard let value else { return [] }
        guard let list = value.arrayValue, list.count <= KDEConnectLimits.capabilities else {
            throw KDEConnectError("an identity of \(id) with capabilities that are not a list of at most \(KDEConnectLimits.capabilities)")
        }
        var out: [String] = []
        for item in list {
            guard let name = item.stringValue, name.hasPrefix("kdeconnect."), name.utf8.count <= KDEConnectLimits.capabilityBytes else {
                throw KDEConnectError("an identity of \(id) with a capability that is not a kdeconnect. name")
            }
            if !out.contains(name) { out.append(name) }
        }
        return out
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s = s.dropFirst() }
        while s.last?.isWhitespace == true { s = s.dropLast() }
        return String(s)
    }
}
