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
    /// Header naming the session a become-current belongs to (alternative: body field `session`).
    public static let sessionHeader = "Handoff-Session"
}
