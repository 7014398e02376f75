/// A user activity: what the user is doing in some app right now, in the form that
/// travels to their other workstations (NSUserActivity's fields, Docs/LocalAPI.md).
public struct Activity: Sendable, Equatable {
    public var id: ActivityID
    /// Reverse-DNS, e.g. `com.example.editor.edit-note`.
    public var activityType: String
    public var title: String
    public var userInfo: UserInfo
    /// Keys that must be present in `userInfo` for the activity to be usable elsewhere.
    public var requiredUserInfoKeys: [String]
    /// userInfo keys whose values the app lets the history index (when eligibleForSearch);
    /// the rest of userInfo is never indexed.
    public var searchableUserInfoKeys: [String] = []
    /// http or https; opened in a browser where no app handles the type.
    public var webpageURL: String?
    public var expirationDate: Timestamp?
    public var keywords: [String]
    public var eligibleForHandoff: Bool
    public var eligibleForSearch: Bool
    public var eligibleForPublicIndexing: Bool
    public var supportsContinuationStreams: Bool
    /// The payload is stale: the owner is asked to refresh it (will-save) before it is sent.
    public var needsSave: Bool
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    public var origin: DeviceRef

    /// The page that led the user here (http or https): NSUserActivity's `referrerURL`.
    public var referrerURL: String?
    /// The app's own name for what the activity shows, stable across activities: saved
    /// activities (the history) can be deleted by it.
    public var persistentIdentifier: String?
    /// Which of the app's windows or documents should continue it (NSUserActivity's
    /// `targetContentIdentifier`): the continuing app decides what it matches.
    public var targetContentIdentifier: String?
    /// The app lets the system suggest the activity again later. Kept and indexed;
    /// handoff suggests nothing on its own.
    public var eligibleForPrediction = false
    /// Search attributes (NSUserActivity's `contentAttributeSet`): what the content is,
    /// and the name to show for it; the history indexes both when `eligibleForSearch`.
    public var contentDescription: String?
    public var displayName: String?
    /// A small PNG or JPEG shown beside the activity (history, notifications).
    public var thumbnail: [UInt8]?

    public init(
        id: ActivityID, activityType: String, title: String = "", userInfo: UserInfo = [:],
        requiredUserInfoKeys: [String] = [], webpageURL: String? = nil, expirationDate: Timestamp? = nil,
        keywords: [String] = [], eligibleForHandoff: Bool = true, eligibleForSearch: Bool = false,
        eligibleForPublicIndexing: Bool = false, supportsContinuationStreams: Bool = false,
        needsSave: Bool = false, createdAt: Timestamp, updatedAt: Timestamp? = nil, origin: DeviceRef
    ) {
        self.id = id
        self.activityType = activityType
        self.title = title
        self.userInfo = userInfo
        self.requiredUserInfoKeys = requiredUserInfoKeys
        self.webpageURL = webpageURL
        self.expirationDate = expirationDate
        self.keywords = keywords
        self.eligibleForHandoff = eligibleForHandoff
        self.eligibleForSearch = eligibleForSearch
        self.eligibleForPublicIndexing = eligibleForPublicIndexing
        self.supportsContinuationStreams = supportsContinuationStreams
        self.needsSave = needsSave
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.origin = origin
    }

    public func isExpired(at now: Timestamp) -> Bool {
        guard let expirationDate else { return false }
        return expirationDate <= now
    }

    /// Required keys that `userInfo` lacks (the continuing side refuses such a payload).
    public var missingRequiredKeys: [String] {
        requiredUserInfoKeys.filter { userInfo[$0] == nil }
    }
}

/// Activity types every handoff implementation gives the same meaning.
public enum WellKnownActivityType {
    /// "The user was on this web page" (`webpageURL`): it opens in the app that claims the
    /// page's domain, else in the default browser.
    public static let browsingWeb = "handoff.browsing-web"
}

extension WellKnownActivityType {
    /// "The user was playing this": `userInfo` has `url` (the media), `positionMicroseconds`,
    /// and may have `title`, `artist`, `lengthMicroseconds`, `playerDesktopEntry`, `playing`.
    /// The continuing side plays it from that position in a media player (MPRIS).
    public static let media = "handoff.media"
}

extension WellKnownActivityType {
    /// "The user shared this text" (from a phone, by KDE Connect): `userInfo` has `text`.
    /// The continuing side offers it to paste (the clipboard) or shows it.
    public static let text = "handoff.text"
}
