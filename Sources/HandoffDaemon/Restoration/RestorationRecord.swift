import HandoffCore

/// One app's saved restoration state and what its launches did with it (seed 002): pure,
/// so that the rules are tested without files or sessions.
///
/// - The state is stamped with the app's version; a restore by another version gets
///   nothing (and the state is discarded) unless the app accepts older state.
/// - A restore is a launch in progress until the app says it is up (`restored`). A launch
///   that never says so (the app asked again, or its session ended first) failed; two
///   failed launches in a row discard the state, so a state that crashes the app is not
///   handed to it a third time.
struct RestorationRecord: Sendable, Equatable {
    var version: String
    var savedAt: Timestamp
    /// Restoration paths (`Tabs/Nav/Editor`) to typed-JSON values.
    var entries: JSONObject
    /// The app's activity this state may travel with when another workstation continues it.
    var continueWith: ActivityID?
    /// A restore handed out and not yet confirmed, and the session that asked, if any.
    var launchStarted: Timestamp?
    var launchSession: String?
    var failedLaunches = 0

    static let failedLaunchesBeforeDiscard = 2

    enum Restore: Sendable, Equatable {
        /// The state; `older`: saved by another version that the app accepts.
        case state(older: Bool)
        /// Nothing to hand out; the record is to be discarded for this reason.
        case discard(reason: String)
    }

    /// A launch asks for its state.
    mutating func restore(version asking: String, acceptOlder: Bool, session: String?, at now: Timestamp) -> Restore {
        if launchStarted != nil { failedLaunches += 1 }  // the previous launch never said it was up
        if failedLaunches >= Self.failedLaunchesBeforeDiscard {
            return .discard(reason: "crash_loop")
        }
        if asking != version && !acceptOlder {
            return .discard(reason: "version_changed")
        }
        launchStarted = now
        launchSession = session
        return .state(older: asking != version)
    }

    /// The app is up: the launch went well.
    mutating func restored() {
        launchStarted = nil
        launchSession = nil
        failedLaunches = 0
    }

    /// A session ended. If it was the launch in progress, the launch failed; returns
    /// whether the record changed.
    mutating func sessionEnded(_ token: String) -> Bool {
        guard launchStarted != nil, launchSession == token else { return false }
        launchStarted = nil
        launchSession = nil
        failedLaunches += 1
        return true
    }

    // MARK: Validation

    static let maximumEntries = 256
    static let maximumPathBytes = 512
    static let maximumEncodedBytes = 1 << 20

    /// An app id: what the app calls itself (its desktop id without `.desktop`, say).
    static func validateApp(_ app: String) throws(ValidationError) {
        guard !app.isEmpty, app.utf8.count <= 255, app.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }) else {
            throw ValidationError(field: "app", problem: "must be 1 to 255 of ASCII letters, digits, '-', '_' and '.', such as org.example.Editor")
        }
    }

    /// Restoration paths: identifiers from the root, separated by '/', none empty.
    static func validate(entries: JSONObject) throws(ValidationError) {
        guard entries.count <= maximumEntries else { throw ValidationError(field: "entries", problem: "more than \(maximumEntries) paths") }
        for (path, value) in entries.pairs {
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            guard !path.isEmpty, path.utf8.count <= maximumPathBytes, parts.allSatisfy({ !$0.isEmpty }),
                  !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw ValidationError(field: "entries.\(path)", problem: "a restoration path is identifiers from the root separated by '/' (Tabs/Nav/Editor), none empty, at most \(maximumPathBytes) bytes")
            }
            _ = try TypedJSON.decode(value, path: "entries.\(path)")
        }
    }
}
