/// A failure as the daemon's domain sees it: what kind of thing went wrong, a stable code
/// (the local API's `error.code`, Docs/LocalAPI.md §4) and a message that says what to
/// do. It knows nothing of HTTP: the local API maps the kind to a status at its boundary
/// (`APIError.init(_:)`), and the peer protocol uses the code alone.
public struct HandoffError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable, CaseIterable {
        /// The request is malformed or names nothing sensible.
        case badRequest
        /// An activity (or value) that breaks the model's rules.
        case invalid
        case notFound
        /// Not this caller's to do.
        case forbidden
        /// It clashes with the state things are in (a session that is not open, a device
        /// removed for good, a role held by someone else).
        case conflict
        /// It existed and is gone for good (invalidated, expired).
        case gone
        /// The other side speaks a protocol version this one cannot.
        case versionMismatch
        /// Something this needs is not there now (no session agent, the peer side starting).
        case unavailable
        /// Another workstation failed or sent something unusable.
        case peerFailed
        /// Another workstation did not answer in time.
        case peerTimedOut
        /// The state directory cannot take what must be saved (the disk is full, or the
        /// user's quota is spent): nothing changed, and the same request works once there
        /// is room.
        case storageFull
        /// Our own fault (a file that could not be written, say).
        case `internal`
    }

    public var kind: Kind
    public var code: String
    public var message: String

    public init(_ kind: Kind, code: String, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    public var description: String { message }

    // The codes in Docs/LocalAPI.md.
    public static func invalidJSON(_ e: JSONParseError) -> HandoffError { HandoffError(.badRequest, code: "invalid_json", message: e.description) }
    public static func invalid(_ e: ValidationError) -> HandoffError { HandoffError(.invalid, code: "invalid_activity", message: e.description) }
    public static func badRequest(_ m: String) -> HandoffError { HandoffError(.badRequest, code: "bad_request", message: m) }
    public static func notFound(_ m: String) -> HandoffError { HandoffError(.notFound, code: "not_found", message: m) }
    public static func invalidated(_ id: ActivityID) -> HandoffError {
        HandoffError(.gone, code: "invalidated", message: "activity \(id) was invalidated; an invalidated activity is final, make a new one with become-current")
    }
    public static func expired(_ id: ActivityID) -> HandoffError {
        HandoffError(.gone, code: "expired", message: "activity \(id) has expired; make a new one with become-current")
    }
    public static func noCurrent() -> HandoffError { HandoffError(.notFound, code: "no_current_activity", message: "no activity is current on this device") }
    /// What must survive a restart could not be written to the state directory.
    public static func notSaved(_ what: String, _ error: any Error) -> HandoffError {
        HandoffError(.storageFull, code: "not_saved",
                     message: "handoffd could not save \(what), so nothing changed: \(error); free some space in the state directory (see `handoffctl doctor`) and try again")
    }
    public static func unknownSession(_ token: String) -> HandoffError {
        HandoffError(.conflict, code: "unknown_session", message: "session \(token) is not open; open one with GET /v1/events and use the token it sends first")
    }
}
