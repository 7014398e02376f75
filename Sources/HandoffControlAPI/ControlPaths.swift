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
    /// Activities continued here lately, for the apps launched to continue them.
    public static let continued = "/v1/continued"
    public static func continued(_ id: String) -> String { "/v1/continued/\(id)" }
    /// The session agent takes the launcher role here, and answers launches there.
    public static let launcher = "/v1/launcher"
    /// The folders this workstation syncs (Syncthing, Nextcloud, synced-root), resolved.
    public static let syncedRoots = "/v1/synced-roots"
    public static func launch(_ launchID: String) -> String { "/v1/launches/\(launchID)" }
    /// The account of devices: members and removals; remove one (`{"deviceID"}`).
    public static let devices = "/v1/devices"
    public static let removeDevice = "/v1/devices/remove"
    /// The activity history: search it (`POST`, a HistoryQuery), clear it (`DELETE`),
    /// reopen an entry's page or document.
    public static let history = "/v1/history"
    /// Apps' restoration state (Docs/LocalAPI.md §20).
    public static let state = "/v1/state"
    /// What handoffd can tell `handoffctl doctor`.
    public static let diagnostics = "/v1/diagnostics"
    public static func state(_ app: String) -> String { "/v1/state/\(app)" }
    public static let historySearch = "/v1/history/search"
    public static func historyOpen(_ id: Int64) -> String { "/v1/history/\(id)/open" }
    /// Pairing by code: open the window (POST), its state (GET), cancel (DELETE), and
    /// confirm the code both screens show.
    public static let pairing = "/v1/pairing"
    public static let pairingConfirm = "/v1/pairing/confirm"
    /// The session agent's desktop sources: list them, turn one on or off (`{"enabled"}`);
    /// the agent answers handoffd's questions about them at `sourceAnswer`.
    public static let sources = "/v1/sources"
    public static func source(_ name: String) -> String { "/v1/sources/\(name)" }
    public static func sourceAnswer(_ requestID: String) -> String { "/v1/source-answers/\(requestID)" }
    /// Continuation streams: open one to a continued activity (HTTP upgrade)...
    public static func openStream(activity: String) -> String { "/v1/streams?activity=\(activity)" }
    /// ...asking handoffd to write what the origin sends into `path` (absolute; an empty
    /// regular file the caller made, or /dev/null) instead of passing it on as data frames.
    public static func openStream(activity: String, document: Bool, into path: String?) -> String {
        openStream(activity: activity) + (document ? "&document=1" : "") + (path.map { "&into=" + PercentEncoding.encode($0) } ?? "")
    }
    /// ...and, at the origin, take (upgrade) or refuse one the owner was asked for.
    public static func acceptStream(_ streamID: String) -> String { "/v1/streams/\(streamID)/accept" }
    public static func refuseStream(_ streamID: String) -> String { "/v1/streams/\(streamID)/refuse" }
    /// The `Upgrade` token of continuation streams.
    public static let streamProtocol = "handoff-stream"
    /// Sent by an owner accepting a stream (and passed on to the continuing app in the
    /// open frame): how many bytes it will send, when known.
    public static let streamLengthHeader = "Handoff-Stream-Length"
    /// Header naming the session a become-current belongs to (alternative: body field `session`).
    public static let sessionHeader = "Handoff-Session"
}
