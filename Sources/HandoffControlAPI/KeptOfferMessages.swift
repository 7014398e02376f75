import HandoffCore

/// `POST /v1/kept-offers/forget`: drop what this workstation keeps for the others while
/// they sleep (Docs/LocalAPI.md §22): everything, or one workstation's (`device`, a name
/// or device ID).
public struct ForgetKeptRequest: Sendable, Equatable {
    public var device: String?

    public init(device: String? = nil) { self.device = device }

    public var json: JSONValue { .object(device.map { ["device": .string($0)] } ?? [:]) }

    public init(body: JSONObject) throws(HandoffError) {
        device = try RequestBody.read(body) { r throws(ValidationError) in try r.string("device") }
    }
}

/// The answer: how many workstations' kept offers (or withdrawals) were dropped.
public struct KeptForgotten: Sendable, Equatable {
    public var forgotten: Int

    public init(forgotten: Int) { self.forgotten = forgotten }

    public var json: JSONValue { .object(["forgotten": .integer(Int64(forgotten))]) }

    public init(json: JSONValue) throws(ValidationError) {
        guard let n = json.objectValue?["forgotten"]?.integerValue else { throw ValidationError(field: "forgotten", problem: "missing") }
        forgotten = Int(n)
    }
}
