/// What an app supplies to make an activity current; the daemon adds id, times and origin.
public struct ActivityDraft: Sendable, Equatable {
    public var activityType: String
    public var title: String = ""
    public var userInfo: UserInfo = [:]
    public var requiredUserInfoKeys: [String] = []
    public var searchableUserInfoKeys: [String] = []
    public var webpageURL: String?
    public var expirationDate: Timestamp?
    public var keywords: [String] = []
    public var eligibleForHandoff = true
    public var eligibleForSearch = false
    public var eligibleForPublicIndexing = false
    public var supportsContinuationStreams = false
    public var needsSave = false
    public var referrerURL: String?
    public var persistentIdentifier: String?
    public var targetContentIdentifier: String?
    public var eligibleForPrediction = false
    public var contentDescription: String?
    public var displayName: String?
    public var thumbnail: [UInt8]?

    public init(activityType: String) { self.activityType = activityType }

    public func makeActivity(id: ActivityID, now: Timestamp, origin: DeviceRef) -> Activity {
        var a = Activity(
            id: id, activityType: activityType, title: title, userInfo: userInfo,
            requiredUserInfoKeys: Array(Set(requiredUserInfoKeys)).sorted(), webpageURL: webpageURL,
            expirationDate: expirationDate, keywords: keywords, eligibleForHandoff: eligibleForHandoff,
            eligibleForSearch: eligibleForSearch, eligibleForPublicIndexing: eligibleForPublicIndexing,
            supportsContinuationStreams: supportsContinuationStreams, needsSave: needsSave,
            createdAt: now, origin: origin)
        a.searchableUserInfoKeys = Array(Set(searchableUserInfoKeys)).sorted()
        a.referrerURL = referrerURL
        a.persistentIdentifier = persistentIdentifier
        a.targetContentIdentifier = targetContentIdentifier
        a.eligibleForPrediction = eligibleForPrediction
        a.contentDescription = contentDescription
        a.displayName = displayName
        a.thumbnail = thumbnail
        return a
    }
}

/// A change to an existing activity. Nil fields stay as they are.
public struct ActivityUpdate: Sendable, Equatable {
    public enum UserInfoMode: String, Sendable { case merge, replace }

    public var title: String?
    public var userInfo: UserInfo?
    /// merge: entries are added or overwritten (addUserInfoEntries); replace: userInfo becomes exactly this.
    public var userInfoMode: UserInfoMode = .merge
    public var removeUserInfoKeys: [String] = []
    public var requiredUserInfoKeys: [String]?
    public var searchableUserInfoKeys: [String]?
    /// `.some(nil)` clears it.
    public var webpageURL: String??
    public var expirationDate: Timestamp??
    public var keywords: [String]?
    public var eligibleForHandoff: Bool?
    public var eligibleForSearch: Bool?
    public var eligibleForPublicIndexing: Bool?
    public var supportsContinuationStreams: Bool?
    public var needsSave: Bool?
    /// `.some(nil)` clears each of these.
    public var referrerURL: String??
    public var persistentIdentifier: String??
    public var targetContentIdentifier: String??
    public var eligibleForPrediction: Bool?
    public var contentDescription: String??
    public var displayName: String??
    public var thumbnail: [UInt8]??

    public init() {}

    public func applied(to activity: Activity, now: Timestamp) -> Activity {
        var a = activity
        if let title { a.title = title }
        if let userInfo {
            switch userInfoMode {
            case .merge: a.userInfo.merge(userInfo) { _, new in new }
            case .replace: a.userInfo = userInfo
            }
        }
        for key in removeUserInfoKeys { a.userInfo[key] = nil }
        if let requiredUserInfoKeys { a.requiredUserInfoKeys = Array(Set(requiredUserInfoKeys)).sorted() }
        if let searchableUserInfoKeys { a.searchableUserInfoKeys = Array(Set(searchableUserInfoKeys)).sorted() }
        if let webpageURL { a.webpageURL = webpageURL }
        if let expirationDate { a.expirationDate = expirationDate }
        if let keywords { a.keywords = keywords }
        if let eligibleForHandoff { a.eligibleForHandoff = eligibleForHandoff }
        if let eligibleForSearch { a.eligibleForSearch = eligibleForSearch }
        if let eligibleForPublicIndexing { a.eligibleForPublicIndexing = eligibleForPublicIndexing }
        if let supportsContinuationStreams { a.supportsContinuationStreams = supportsContinuationStreams }
        if let needsSave { a.needsSave = needsSave }
        if let referrerURL { a.referrerURL = referrerURL }
        if let persistentIdentifier { a.persistentIdentifier = persistentIdentifier }
        if let targetContentIdentifier { a.targetContentIdentifier = targetContentIdentifier }
        if let eligibleForPrediction { a.eligibleForPrediction = eligibleForPrediction }
        if let contentDescription { a.contentDescription = contentDescription }
        if let displayName { a.displayName = displayName }
        if let thumbnail { a.thumbnail = thumbnail }
        a.updatedAt = now
        return a
    }
}
