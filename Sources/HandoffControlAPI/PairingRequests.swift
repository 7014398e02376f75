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
