import HandoffCore

/// What the browser extension reports about the focused tab, and whether it may be
/// offered: never a private window's, never anything but http(s), never a domain the user
/// listed (`never-offer-domains`).
public struct BrowserTab: Sendable, Equatable {
    public var url: String
    public var title: String
    public var incognito: Bool

    public static let sourceKey = "handoff.source"

    public init(url: String, title: String, incognito: Bool) {
        self.url = url
        self.title = title
        self.incognito = incognito
    }

    /// `{"type": "tab", "url", "title", "incognito"}`; nil for anything else.
    public init?(json text: String) {
        guard let v = try? JSONValue(parsing: Array(text.utf8)), let o = v.objectValue, o["type"]?.stringValue == "tab",
              let url = o["url"]?.stringValue else { return nil }
        self.url = url
        title = o["title"]?.stringValue ?? ""
        incognito = o["incognito"] == .bool(true)
    }

    public func offerable(never denied: [DomainClaim]) -> Bool {
        guard !incognito, let host = HandlerResolver.host(of: url) else { return false }
        guard (try? ActivityValidation.validateWebpageURL(url)) != nil else { return false }
        return !denied.contains { $0.matches(host: host) }
    }

    public var draft: ActivityDraft {
        var d = ActivityDraft(activityType: WellKnownActivityType.browsingWeb)
        d.title = String(title.prefix(200))
        d.webpageURL = url
        // Marks it as the browser source's, so turning the source off can end it.
        d.userInfo[BrowserTab.sourceKey] = .string("browser")
        return d
    }
}
