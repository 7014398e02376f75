import HandoffCore

/// An activity another workstation offers.
public struct Offer: Sendable, Equatable {
    public var device: PeerDevice
    public var activity: ActivitySummary
    public var ageSeconds: Double
    /// Kept by this workstation while its origin sleeps or is out of reach (PeerProtocol.md
    /// §18): continuing it needs no link to the origin, but its streams do.
    public var kept: Bool
    /// Kept, and the origin could not save a fresh payload before it slept.
    public var stale: Bool

    public init(device: PeerDevice, activity: ActivitySummary, ageSeconds: Double, kept: Bool = false, stale: Bool = false) {
        self.device = device
        self.activity = activity
        self.ageSeconds = ageSeconds
        self.kept = kept
        self.stale = stale
    }

    public var json: JSONValue {
        var o: JSONObject = ["device": device.json, "activity": .object(activity.json), "ageSeconds": .double(ageSeconds)]
        if kept { o["kept"] = .bool(true) }
        if stale { o["stale"] = .bool(true) }
        return .object(o)
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue, let a = o["activity"]?.objectValue else {
            throw ValidationError(field: "offer", problem: "must be an object with an activity")
        }
        device = PeerDevice(json: o["device"])
        activity = try ActivitySummary(json: a)
        switch o["ageSeconds"] {
        case .double(let d)?: ageSeconds = d
        case .integer(let i)?: ageSeconds = Double(i)
        default: ageSeconds = 0
        }
        kept = o["kept"]?.boolValue ?? false
        stale = o["stale"]?.boolValue ?? false
    }

    /// `{"offers": [...]}`, the body of `GET /v1/offers`.
    public static func listJSON(_ offers: [Offer]) -> JSONValue { .object(["offers": .array(offers.map(\.json))]) }

    public static func list(json: JSONValue) throws(ValidationError) -> [Offer] {
        guard case .array(let items)? = json.objectValue?["offers"] else { throw ValidationError(field: "offers", problem: "is required") }
        var out: [Offer] = []
        for item in items { out.append(try Offer(json: item)) }
        return out
    }
}
