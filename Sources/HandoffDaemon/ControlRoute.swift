import NIOHTTP1

/// The control API's route table: every route in one place (Docs/LocalAPI.md).
enum ControlRoute: Sendable, Equatable {
    case status
    case events
    case listActivities
    case becomeCurrent
    case getActivity(String)
    case updateActivity(String)
    case becomeCurrentAgain(String)
    case resign(String)
    case invalidate(String)
    case snapshot(String)
    case identity
    case peers
    case trust
    case untrust
    case offers
    case continueActivity
    case listContinued
    case continuedActivity(String)
    case continuedDocument(String)
    case claimLauncher
    case syncedRoots
    case answerLaunch(String)
    case devices
    case searchHistory
    case diagnostics
    case listState
    case saveState(String)
    case restoreState(String)
    case stateRestored(String)
    case discardState(String)
    case clearHistory
    case openHistoryEntry(String)
    case removeDevice
    case openPairing
    case pairingStatus
    case confirmPairing
    case cancelPairing
    case listSources
    case setSource(String)
    case answerSources(String)
    case openStream
    case acceptStream(String)
    case refuseStream(String)

    enum Match: Equatable {
        case route(ControlRoute)
        case methodNotAllowed
        case notFound
    }

    private static let table: [(HTTPMethod, [String], @Sendable (String) -> ControlRoute)] = [
        (.GET, ["v1", "status"], { _ in .status }),
        (.GET, ["v1", "events"], { _ in .events }),
        (.GET, ["v1", "activities"], { _ in .listActivities }),
        (.POST, ["v1", "activities"], { _ in .becomeCurrent }),
        (.GET, ["v1", "activities", ":id"], { .getActivity($0) }),
        (.PATCH, ["v1", "activities", ":id"], { .updateActivity($0) }),
        (.DELETE, ["v1", "activities", ":id"], { .invalidate($0) }),
        (.POST, ["v1", "activities", ":id", "become-current"], { .becomeCurrentAgain($0) }),
        (.POST, ["v1", "activities", ":id", "resign"], { .resign($0) }),
        (.POST, ["v1", "activities", ":id", "invalidate"], { .invalidate($0) }),
        (.POST, ["v1", "activities", ":id", "snapshot"], { .snapshot($0) }),
        (.GET, ["v1", "identity"], { _ in .identity }),
        (.GET, ["v1", "peers"], { _ in .peers }),
        (.POST, ["v1", "peers", "trust"], { _ in .trust }),
        (.POST, ["v1", "peers", "untrust"], { _ in .untrust }),
        (.GET, ["v1", "offers"], { _ in .offers }),
        (.POST, ["v1", "continue"], { _ in .continueActivity }),
        (.GET, ["v1", "continued"], { _ in .listContinued }),
        (.GET, ["v1", "continued", ":id"], { .continuedActivity($0) }),
        (.GET, ["v1", "continued", ":id", "document"], { .continuedDocument($0) }),
        (.POST, ["v1", "launcher"], { _ in .claimLauncher }),
        (.GET, ["v1", "synced-roots"], { _ in .syncedRoots }),
        (.POST, ["v1", "launches", ":id"], { .answerLaunch($0) }),
        (.GET, ["v1", "devices"], { _ in .devices }),
        (.POST, ["v1", "history", "search"], { _ in .searchHistory }),
        (.GET, ["v1", "state"], { _ in .listState }),
        (.GET, ["v1", "diagnostics"], { _ in .diagnostics }),
        (.PUT, ["v1", "state", ":id"], { .saveState($0) }),
        (.DELETE, ["v1", "state", ":id"], { .discardState($0) }),
        (.POST, ["v1", "state", ":id", "restore"], { .restoreState($0) }),
        (.POST, ["v1", "state", ":id", "restored"], { .stateRestored($0) }),
        (.DELETE, ["v1", "history"], { _ in .clearHistory }),
        (.POST, ["v1", "history", ":id", "open"], { .openHistoryEntry($0) }),
        (.POST, ["v1", "devices", "remove"], { _ in .removeDevice }),
        (.POST, ["v1", "pairing"], { _ in .openPairing }),
        (.GET, ["v1", "pairing"], { _ in .pairingStatus }),
        (.DELETE, ["v1", "pairing"], { _ in .cancelPairing }),
        (.POST, ["v1", "pairing", "confirm"], { _ in .confirmPairing }),
        (.GET, ["v1", "sources"], { _ in .listSources }),
        (.POST, ["v1", "sources", ":id"], { .setSource($0) }),
        (.POST, ["v1", "source-answers", ":id"], { .answerSources($0) }),
        (.POST, ["v1", "streams"], { _ in .openStream }),
        (.POST, ["v1", "streams", ":id", "accept"], { .acceptStream($0) }),
        (.POST, ["v1", "streams", ":id", "refuse"], { .refuseStream($0) }),
    ]

    static func match(method: HTTPMethod, path: String) -> Match {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var pathMatched = false
        for (m, pattern, make) in table where pattern.count == segments.count {
            var id = ""
            let fits = zip(pattern, segments).allSatisfy { p, s in
                if p == ":id" { id = s; return true }
                return p == s
            }
            guard fits else { continue }
            pathMatched = true
            if m == method { return .route(make(id)) }
        }
        return pathMatched ? .methodNotAllowed : .notFound
    }
}
