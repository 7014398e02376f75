/// Every route of the local API, once (Docs/LocalAPI.md §6): its method and its path, in
/// which `{...}` stands for the one parameter a route may take. handoffd matches requests
/// against this list and clients build their paths from it, so the two cannot disagree;
/// a test checks that LocalAPI.md's route table names exactly these.
public enum ControlEndpoint: CaseIterable, Sendable, Hashable {
    case status
    case events
    case listActivities
    case becomeCurrent
    case getActivity
    case updateActivity
    case deleteActivity
    case becomeCurrentAgain
    case resign
    case invalidate
    case snapshot
    case identity
    case renewIdentity
    case peers
    case trust
    case untrust
    case offers
    case continueActivity
    case listContinued
    case continuedActivity
    case continuedDocument
    case claimLauncher
    case syncedRoots
    case answerLaunch
    case devices
    case removeDevice
    case searchHistory
    case clearHistory
    case forgetSavedActivities
    case openHistoryEntry
    case diagnostics
    case listState
    case saveState
    case discardState
    case restoreState
    case stateRestored
    case openPairing
    case pairingStatus
    case confirmPairing
    case cancelPairing
    case listSources
    case setSource
    case answerSources
    case openStream
    case acceptStream
    case refuseStream
    case sleep
    case forgetKept
    case clipboard
    case announceClipboard
    case withdrawClipboard
    case copyToClipboard
    case pasteClipboard
    case kdeConnect
    case setKDEConnect
    case kdeConnectDevice

    /// The HTTP method and the path pattern.
    public var route: (method: String, pattern: String) {
        switch self {
        case .status: ("GET", "/v1/status")
        case .events: ("GET", "/v1/events")
        case .listActivities: ("GET", "/v1/activities")
        case .becomeCurrent: ("POST", "/v1/activities")
        case .getActivity: ("GET", "/v1/activities/{id}")
        case .updateActivity: ("PATCH", "/v1/activities/{id}")
        case .deleteActivity: ("DELETE", "/v1/activities/{id}")
        case .becomeCurrentAgain: ("POST", "/v1/activities/{id}/become-current")
        case .resign: ("POST", "/v1/activities/{id}/resign")
        case .invalidate: ("POST", "/v1/activities/{id}/invalidate")
        case .snapshot: ("POST", "/v1/activities/{id}/snapshot")
        case .identity: ("GET", "/v1/identity")
        case .renewIdentity: ("POST", "/v1/identity/renew")
        case .peers: ("GET", "/v1/peers")
        case .trust: ("POST", "/v1/peers/trust")
        case .untrust: ("POST", "/v1/peers/untrust")
        case .offers: ("GET", "/v1/offers")
        case .continueActivity: ("POST", "/v1/continue")
        case .listContinued: ("GET", "/v1/continued")
        case .continuedActivity: ("GET", "/v1/continued/{id}")
        case .continuedDocument: ("GET", "/v1/continued/{id}/document")
        case .claimLauncher: ("POST", "/v1/launcher")
        case .syncedRoots: ("GET", "/v1/synced-roots")
        case .answerLaunch: ("POST", "/v1/launches/{launchID}")
        case .devices: ("GET", "/v1/devices")
        case .removeDevice: ("POST", "/v1/devices/remove")
        case .searchHistory: ("POST", "/v1/history/search")
        case .clearHistory: ("DELETE", "/v1/history")
        case .forgetSavedActivities: ("POST", "/v1/history/forget")
        case .openHistoryEntry: ("POST", "/v1/history/{id}/open")
        case .diagnostics: ("GET", "/v1/diagnostics")
        case .listState: ("GET", "/v1/state")
        case .saveState: ("PUT", "/v1/state/{app}")
        case .discardState: ("DELETE", "/v1/state/{app}")
        case .restoreState: ("POST", "/v1/state/{app}/restore")
        case .stateRestored: ("POST", "/v1/state/{app}/restored")
        case .openPairing: ("POST", "/v1/pairing")
        case .pairingStatus: ("GET", "/v1/pairing")
        case .confirmPairing: ("POST", "/v1/pairing/confirm")
        case .cancelPairing: ("DELETE", "/v1/pairing")
        case .listSources: ("GET", "/v1/sources")
        case .setSource: ("POST", "/v1/sources/{name}")
        case .answerSources: ("POST", "/v1/source-answers/{requestID}")
        case .openStream: ("POST", "/v1/streams")
        case .acceptStream: ("POST", "/v1/streams/{streamID}/accept")
        case .refuseStream: ("POST", "/v1/streams/{streamID}/refuse")
        case .sleep: ("POST", "/v1/sleep")
        case .forgetKept: ("POST", "/v1/kept-offers/forget")
        case .clipboard: ("GET", "/v1/clipboard")
        case .announceClipboard: ("POST", "/v1/clipboard")
        case .withdrawClipboard: ("DELETE", "/v1/clipboard")
        case .copyToClipboard: ("POST", "/v1/clipboard/copy")
        case .pasteClipboard: ("POST", "/v1/clipboard/paste")
        case .kdeConnect: ("GET", "/v1/kdeconnect")
        case .setKDEConnect: ("POST", "/v1/kdeconnect")
        case .kdeConnectDevice: ("POST", "/v1/kdeconnect/devices/{device}")
        }
    }

    public var method: String { route.method }

    /// The path with its parameter filled in (as given: ids and names need no escaping).
    public func path(_ parameter: String = "") -> String {
        let pattern = route.pattern
        guard let open = pattern.firstIndex(of: "{"), let close = pattern[open...].firstIndex(of: "}") else { return pattern }
        return String(pattern[..<open]) + parameter + String(pattern[pattern.index(after: close)...])
    }

    /// `/v1/streams?activity=...`: a continuation stream to a continued activity; with
    /// `document`, to its document; with `into` (absolute: an empty regular file the caller
    /// made, or /dev/null), handoffd writes what the origin sends there instead of passing
    /// it on as data frames.
    public static func openStreamPath(activity: String, document: Bool = false, into path: String? = nil) -> String {
        openStream.path() + "?activity=\(activity)" + (document ? "&document=1" : "") + (path.map { "&into=" + PercentEncoding.encode($0) } ?? "")
    }

    /// `/v1/clipboard/copy?type=...`: the connection upgrades to a stream whose data
    /// handoffd keeps as this workstation's copy in that one format.
    public static func copyPath(type: String) -> String {
        copyToClipboard.path() + "?type=" + PercentEncoding.encode(type)
    }

    /// `/v1/clipboard/paste`: the newest copy's bytes in `type` (default: its first
    /// format); `id` pastes only that copy (`clipboard_changed` if it is no longer the
    /// newest); `into` as for streams.
    public static func pastePath(type: String? = nil, id: String? = nil, into path: String? = nil) -> String {
        var query: [String] = []
        if let type { query.append("type=" + PercentEncoding.encode(type)) }
        if let id { query.append("id=" + id) }
        if let path { query.append("into=" + PercentEncoding.encode(path)) }
        return pasteClipboard.path() + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    public enum Match: Equatable, Sendable {
        /// The endpoint, and its parameter ("" for a route without one).
        case endpoint(ControlEndpoint, String)
        case methodNotAllowed
        case notFound
    }

    private static let patterns: [(method: String, segments: [Substring], endpoint: ControlEndpoint)] = allCases.map {
        ($0.method, $0.route.pattern.split(separator: "/"), $0)
    }

    /// The endpoint a request is for (`path` without its query); a path that exists with
    /// another method is told apart from one that does not exist.
    public static func match(method: String, path: String) -> Match {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var pathMatched = false
        for p in patterns where p.segments.count == segments.count {
            var parameter: Substring = ""
            let fits = zip(p.segments, segments).allSatisfy { pattern, segment in
                if pattern.first == "{" { parameter = segment; return true }
                return pattern == segment
            }
            guard fits else { continue }
            pathMatched = true
            if p.method == method { return .endpoint(p.endpoint, String(parameter)) }
        }
        return pathMatched ? .methodNotAllowed : .notFound
    }

    /// The `Upgrade` token of continuation streams.
    public static let streamProtocol = "handoff-stream"
    /// Sent by an owner accepting a stream (and passed on to the continuing app in the
    /// open frame): how many bytes it will send, when known.
    public static let streamLengthHeader = "Handoff-Stream-Length"
    /// Names the session a request belongs to (alternative: the body's `session`).
    public static let sessionHeader = "Handoff-Session"
    /// On become-current and update: what the app should hear (a payload over the advised size).
    public static let warningHeader = "Handoff-Warning"
}
