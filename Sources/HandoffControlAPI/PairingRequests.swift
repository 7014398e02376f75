import HandoffCore

/// `POST /v1/pairing`: open the pairing window (or join the open one); with `address`
/// (HOST:PORT), dial that workstation to pair. The answer is a `PairingStatus`.
public struct OpenPairingRequest: Sendable, Equatable {
    public var address: String?

    public init(address: String? = nil) { self.address = address }

    public var json: JSONValue { .object(address.map { ["address": .string($0)] } ?? [:]) }

    public init(body: JSONObject) throws(HandoffError) {
        address = try RequestBody.read(body) { r throws(ValidationError) in try r.string("address") }
    }
}

/// `POST /v1/pairing/confirm`: the code both screens show. The answer is a `PairingStatus`.
public struct ConfirmPairingRequest: Sendable, Equatable {
    public var code: String

    public init(code: String) { self.code = code }

    public var json: JSONValue { .object(["code": .string(code)]) }

    public init(body: JSONObject) throws(HandoffError) {
        guard let code = try RequestBody.read(body, { r throws(ValidationError) in try r.string("code") }) else {
            throw .badRequest("say {\"code\": \"123456\"}: the code both screens show")
        }
        self.code = code
    }
}

/// `POST /v1/identity/renew`: a new device identity for this workstation, the old one's
/// files kept aside, then handoffd restarts with it (LocalAPI.md §17.1). Refused while the
/// workstation is still a member of an account with others, unless `force`.
public struct RenewIdentityRequest: Sendable, Equatable {
    public var force: Bool

    public init(force: Bool = false) { self.force = force }

    public var json: JSONValue { .object(force ? ["force": .bool(true)] : [:]) }

    public init(body: JSONObject) throws(HandoffError) {
        force = try RequestBody.read(body) { r throws(ValidationError) in try r.bool("force") } ?? false
    }
}

/// The answer of `POST /v1/identity/renew`: the identity set aside and where its files
/// are kept. handoffd restarts once it has answered, and comes back with a new identity.
public struct IdentityRenewal: Sendable, Equatable {
    public var previousID: String
    public var keptAt: String

    public init(previousID: String, keptAt: String) {
        self.previousID = previousID
        self.keptAt = keptAt
    }

    public var json: JSONValue {
        .object(["previousID": .string(previousID), "keptAt": .string(keptAt), "restarting": .bool(true)])
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "renewal", problem: "is not an object") }
        var r = JSONFieldReader(o)
        previousID = try r.requiredString("previousID")
        keptAt = try r.string("keptAt") ?? ""
    }
}
