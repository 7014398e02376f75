import HandoffCore

/// What continuing an activity should open here, decided without touching the desktop:
/// the user's choice for the type, else an app declaring the type, else the web page in
/// an app claiming its domain, else in the default browser, else nothing (and why).
public struct HandlerResolver: Sendable {
    /// The URI scheme a handler app gets its continued activity with: `handoff:continued/ID`.
    public static let uriPrefix = "handoff:continued/"

    /// Every installed app (an override may name one that declares nothing).
    public var handlers: [DesktopHandler]
    /// activityType -> desktop id, from the user's configuration.
    public var overrides: [String: String]
    /// The default handler of https URLs.
    public var browser: DesktopHandler?

    public init(handlers: [DesktopHandler], overrides: [String: String] = [:], browser: DesktopHandler? = nil) {
        self.handlers = handlers
        self.overrides = overrides
        self.browser = browser
    }

    public enum Plan: Sendable, Equatable {
        /// Launch `app` with `uris`.
        case open(app: DesktopHandler, route: Route, uris: [String])
        case nothing(code: String, message: String)
    }

    public enum Route: String, Sendable {
        case handler, domain, browser, document
    }

    public func plan(activityID: String, activityType: String, webpageURL: String?) -> Plan {
        if let chosen = overrides[activityType] {
            guard let app = handlers.first(where: { $0.id == chosen }) else {
                return .nothing(code: "handler_missing",
                                message: "your configuration sends \(activityType) to \(chosen), which is not installed; fix handler.\(activityType) in handoff-session.conf")
            }
            return .open(app: app, route: .handler, uris: [Self.uriPrefix + activityID])
        }
        let claiming = webpageURL.flatMap { url in Self.host(of: url).flatMap { host in
            handlers.filter { $0.domains.contains { $0.matches(host: host) } }.min(by: Self.preferred).map { ($0, url) }
        } }
        // A web page: the app that claims its domain beats any app taking web pages in general.
        if activityType == WellKnownActivityType.browsingWeb, let (app, url) = claiming {
            return .open(app: app, route: .domain, uris: [url])
        }
        let declaring = handlers.filter { $0.activityTypes.contains(activityType) }
        if let app = declaring.min(by: Self.preferred) {
            return .open(app: app, route: .handler, uris: [Self.uriPrefix + activityID])
        }
        if let url = webpageURL, Self.host(of: url) != nil {
            if let (app, url) = claiming { return .open(app: app, route: .domain, uris: [url]) }
            guard let browser else {
                return .nothing(code: "no_browser",
                                message: "nothing here opens \(activityType) activities, and there is no default web browser for its page \(url) (set one: `xdg-settings set default-web-browser APP.desktop`)")
            }
            return .open(app: browser, route: .browser, uris: [url])
        }
        return .nothing(code: "no_handler",
                        message: "nothing here opens \(activityType) activities and the activity has no web page: install an app whose desktop entry declares X-Handoff-ActivityTypes=\(activityType); (Docs/Apps.md), or name one with handler.\(activityType) in handoff-session.conf")
    }

    /// For a notification: the icon of whatever would open it.
    public func icon(activityType: String, webpageURL: String?) -> (icon: String?, app: String?) {
        if case .open(let app, _, _) = plan(activityID: "", activityType: activityType, webpageURL: webpageURL) { return (app.icon, app.id) }
        return (nil, nil)
    }

    /// The user's own entries first, then by id, so the choice is stable.
    static func preferred(_ a: DesktopHandler, _ b: DesktopHandler) -> Bool {
        if a.isUserEntry != b.isUserEntry { return a.isUserEntry }
        return a.id < b.id
    }

    /// The host of an http(s) URL, lowercased; nil for anything else.
    public static func host(of url: String) -> String? {
        let lower = url.lowercased()
        guard let schemeEnd = lower.firstRange(of: "://"), ["http", "https"].contains(String(lower[..<schemeEnd.lowerBound])) else { return nil }
        var rest = lower[schemeEnd.upperBound...]
        rest = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("[") { return nil }  // an IPv6 literal is no domain anyone claims
        let host = rest.prefix { $0 != ":" }
        return host.isEmpty ? nil : String(host)
    }
}
