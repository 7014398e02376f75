import HandoffCore

/// `POST /v1/peers/trust`: trust a workstation (or rename a trusted one); with `address`
/// (HOST:PORT), also dial it there.
public struct TrustRequest: Sendable, Equatable {
    public var deviceID: String
    public var name: String?
    public var address: String?

    public init(deviceID: String, name: String? = nil, address: String? = nil) {
        self.deviceID = deviceID
        self.name = name
        self.address = address
    }

    public var json: JSONValue {
        var o: JSONObject = ["deviceID": .string(deviceID)]
        if let name { o["name"] = .string(name) }
        if let address { o["address"] = .string(address) }
        return .object(o)
    }

    public init(body: JSONObject) throws(HandoffError) {
        (deviceID, name, address) = try RequestBody.read(body) { r throws(ValidationError) in
            (try r.requiredString("deviceID"), try r.string("name"), try r.string("address"))
        }
    }
}

/// `POST /v1/peers/untrust` and `POST /v1/devices/remove`: the device they are about.
public struct DeviceRequest: Sendable, Equatable {
    public var deviceID: String

    public init(deviceID: String) { self.deviceID = deviceID }

    public var json: JSONValue { .object(["deviceID": .string(deviceID)]) }

    public init(body: JSONObject) throws(HandoffError) {
        deviceID = try RequestBody.read(body) { r throws(ValidationError) in try r.requiredString("deviceID") }
    }
}

/// `POST /v1/continue`: which offer to continue (the newest matching one), and whether
/// the session agent should open it.
public struct ContinueRequest: Sendable, Equatable {
    /// A device name, ID, or the first group of an ID.
    public var from: String?
    public var type: String?
    public var id: String?
    public var launch: Bool

    public init(from: String? = nil, type: String? = nil, id: String? = nil, launch: Bool = false) {
        self.from = from
        self.type = type
        self.id = id
        self.launch = launch
    }

    public var json: JSONValue {
        var o = JSONObject()
        if let from { o["from"] = .string(from) }
        if let type { o["type"] = .string(type) }
        if let id { o["id"] = .string(id) }
        if launch { o["launch"] = .bool(true) }
        return .object(o)
    }

    public init(body: JSONObject) throws(HandoffError) {
        (from, type, id, launch) = try RequestBody.read(body) { r throws(ValidationError) in
            (try r.string("from"), try r.string("type"), try r.string("id"), try r.bool("launch") ?? false)
        }
    }
}

/// `GET /v1/identity`: this workstation's device ID and name.
public struct Identity: Sendable, Equatable {
    public var deviceID: String
    public var name: String

    public init(deviceID: String, name: String) {
        self.deviceID = deviceID
        self.name = name
    }

    public var json: JSONValue { .object(["deviceID": .string(deviceID), "name": .string(name)]) }

    public init(json: JSONValue) throws(ValidationError) {
        guard let id = json.objectValue?["deviceID"]?.stringValue else { throw ValidationError(field: "deviceID", problem: "is required") }
        self.init(deviceID: id, name: json.objectValue?["name"]?.stringValue ?? "")
    }
}

/// What trusting, untrusting or removing a device did: `trusted` now, and `removed` when
/// it was taken out of the account (untrusting a member does that, as every member
/// trusts every other).
public struct TrustChange: Sendable, Equatable {
    public var deviceID: String
    public var name: String?
    public var trusted: Bool?
    public var removed: Bool?

    public init(deviceID: String, name: String? = nil, trusted: Bool? = nil, removed: Bool? = nil) {
        self.deviceID = deviceID
        self.name = name
        self.trusted = trusted
        self.removed = removed
    }

    public var json: JSONValue {
        var o: JSONObject = ["id": .string(deviceID)]
        if let name { o["name"] = .string(name) }
        if let removed { o["removed"] = .bool(removed) }
        if let trusted { o["trusted"] = .bool(trusted) }
        return .object(o)
    }

    public init(json: JSONValue) throws(ValidationError) {
        let o = json.objectValue ?? [:]
        guard let id = o["id"]?.stringValue else { throw ValidationError(field: "id", problem: "is required") }
        self.init(deviceID: id, name: o["name"]?.stringValue, trusted: o["trusted"]?.boolValue, removed: o["removed"]?.boolValue)
    }
}
