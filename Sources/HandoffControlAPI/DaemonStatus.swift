import HandoffCore

/// `GET /v1/status`: what the daemon is and how it is doing.
public struct DaemonStatus: Sendable, Equatable {
    public var version: String
    public var apiVersion: String
    public var deviceName: String
    public var deviceID: String?
    public var pid: Int
    public var startedAt: Timestamp
    public var socketPath: String
    public var current: ActivityRecord?
    public var sessions: Int
    public var maximumActivityBytes: Int
    /// Whether peers can be found (mDNS through Avahi), and if not, why.
    public var discoveryAvailable: Bool
    public var discoveryDetail: String
    /// Whether a session agent holds the launcher role (continuing can open apps).
    public var launcher: Bool = false

    public init(version: String, apiVersion: String, deviceName: String, deviceID: String?, pid: Int, startedAt: Timestamp,
                socketPath: String, current: ActivityRecord?, sessions: Int, maximumActivityBytes: Int,
                discoveryAvailable: Bool, discoveryDetail: String, launcher: Bool = false) {
        self.version = version
        self.apiVersion = apiVersion
        self.deviceName = deviceName
        self.deviceID = deviceID
        self.pid = pid
        self.startedAt = startedAt
        self.socketPath = socketPath
        self.current = current
        self.sessions = sessions
        self.maximumActivityBytes = maximumActivityBytes
        self.discoveryAvailable = discoveryAvailable
        self.discoveryDetail = discoveryDetail
        self.launcher = launcher
    }

    public var json: JSONValue {
        .object([
            "version": .string(version),
            "apiVersion": .string(apiVersion),
            "device": .object(["name": .string(deviceName), "id": deviceID.map(JSONValue.string) ?? .null]),
            "pid": .integer(Int64(pid)),
            "startedAt": .string(startedAt.rfc3339),
            "socket": .string(socketPath),
            "current": current?.json ?? .null,
            "sessions": .integer(Int64(sessions)),
            "maximumActivityBytes": .integer(Int64(maximumActivityBytes)),
            "discovery": .object(["available": .bool(discoveryAvailable), "detail": .string(discoveryDetail)]),
            "launcher": .bool(launcher),
        ])
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "status", problem: "is not an object") }
        func int(_ v: JSONValue?) -> Int { if case .integer(let i)? = v { Int(i) } else { 0 } }
        let device = o["device"]?.objectValue
        let discovery = o["discovery"]?.objectValue
        version = o["version"]?.stringValue ?? "?"
        apiVersion = o["apiVersion"]?.stringValue ?? "?"
        deviceName = device?["name"]?.stringValue ?? "?"
        deviceID = device?["id"]?.stringValue
        pid = int(o["pid"])
        startedAt = o["startedAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) ?? Timestamp(seconds: 0)
        socketPath = o["socket"]?.stringValue ?? ""
        if let c = o["current"], c != .null { current = try ActivityRecord(json: c) } else { current = nil }
        sessions = int(o["sessions"])
        maximumActivityBytes = int(o["maximumActivityBytes"])
        if case .bool(let b)? = discovery?["available"] { discoveryAvailable = b } else { discoveryAvailable = false }
        discoveryDetail = discovery?["detail"]?.stringValue ?? ""
        launcher = o["launcher"] == .bool(true)
    }
}
