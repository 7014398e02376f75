/// The control API's routes (Docs/LocalAPI.md). Shared by the daemon's router and the client.
public enum ControlPaths {
    public static let status = "/v1/status"
    public static let events = "/v1/events"
    public static let activities = "/v1/activities"
    public static let current = "/v1/activities/current"
    public static func activity(_ id: String) -> String { "/v1/activities/\(id)" }
    public static func resign(_ id: String) -> String { "/v1/activities/\(id)/resign" }
    public static func invalidate(_ id: String) -> String { "/v1/activities/\(id)/invalidate" }
    public static func snapshot(_ id: String) -> String { "/v1/activities/\(id)/snapshot" }
    public static let identity = "/v1/identity"
    public static let peers = "/v1/peers"
    public static let trust = "/v1/peers/trust"
    public static let untrust = "/v1/peers/untrust"
    public static let offers = "/v1/offers"
    public static let continueActivity = "/v1/continue"
    /// Header naming the session a become-current belongs to (alternative: body field `session`).
    public static let sessionHeader = "Handoff-Session"
}
