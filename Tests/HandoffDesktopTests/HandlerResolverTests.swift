import HandoffCore
@testable import HandoffDesktop
import Testing

@Suite("Handler resolution")
struct HandlerResolverTests {
    let editor = DesktopHandler(id: "org.example.Editor.desktop", name: "Editor", activityTypes: ["org.example.edit"])
    let userEditor = DesktopHandler(id: "zz.Mine.desktop", name: "Mine", activityTypes: ["org.example.edit"], isUserEntry: true)
    let reader = DesktopHandler(id: "org.example.Reader.desktop", name: "Reader", domains: [DomainClaim("news.example.org")!, DomainClaim("*.docs.example.org")!])
    let webApp = DesktopHandler(id: "web.desktop", name: "Web", activityTypes: [WellKnownActivityType.browsingWeb])
    let browser = DesktopHandler(id: "browser.desktop", name: "Browser")

    func resolver(_ handlers: [DesktopHandler], overrides: [String: String] = [:], browser: DesktopHandler? = nil) -> HandlerResolver {
        HandlerResolver(handlers: handlers, overrides: overrides, browser: browser)
    }

    @Test func declaredHandlerGetsAHandoffURI() {
        let plan = resolver([editor, reader]).plan(activityID: "ab12", activityType: "org.example.edit", webpageURL: "https://x.org/")
        #expect(plan == .open(app: editor, route: .handler, uris: ["handoff:continued/ab12"]))
    }

    @Test func userEntriesWinThenIdsDecide() {
        #expect(resolver([editor, userEditor]).plan(activityID: "1", activityType: "org.example.edit", webpageURL: nil)
            == .open(app: userEditor, route: .handler, uris: ["handoff:continued/1"]))
        let other = DesktopHandler(id: "a.First.desktop", name: "First", activityTypes: ["org.example.edit"])
        #expect(resolver([editor, other]).plan(activityID: "1", activityType: "org.example.edit", webpageURL: nil)
            == .open(app: other, route: .handler, uris: ["handoff:continued/1"]))
    }

    @Test func overridesWinAndAMissingOneSaysSo() {
        #expect(resolver([editor, reader], overrides: ["org.example.edit": "org.example.Reader.desktop"])
            .plan(activityID: "1", activityType: "org.example.edit", webpageURL: nil)
            == .open(app: reader, route: .handler, uris: ["handoff:continued/1"]))
        guard case .nothing(let code, let message) = resolver([editor], overrides: ["org.example.edit": "gone.desktop"])
            .plan(activityID: "1", activityType: "org.example.edit", webpageURL: nil) else { Issue.record("expected nothing"); return }
        #expect(code == "handler_missing" && message.contains("gone.desktop"))
    }

    @Test func webPagesGoToClaimingAppsThenTheBrowser() {
        let r = resolver([editor, reader], browser: browser)
        #expect(r.plan(activityID: "1", activityType: "org.example.other", webpageURL: "https://news.example.org/a")
            == .open(app: reader, route: .domain, uris: ["https://news.example.org/a"]))
        #expect(r.plan(activityID: "1", activityType: "org.example.other", webpageURL: "https://deep.sub.docs.example.org/a")
            == .open(app: reader, route: .domain, uris: ["https://deep.sub.docs.example.org/a"]))
        #expect(r.plan(activityID: "1", activityType: "org.example.other", webpageURL: "https://docs.example.org:8443/a")
            == .open(app: reader, route: .domain, uris: ["https://docs.example.org:8443/a"]))
        for url in ["https://sub.news.example.org/", "https://news.example.org.evil.test/", "https://evilnews.example.org/", "https://user@other.test/"] {
            #expect(r.plan(activityID: "1", activityType: "org.example.other", webpageURL: url) == .open(app: browser, route: .browser, uris: [url]), "\(url)")
        }
        // The user part of a URL cannot fake the host.
        #expect(r.plan(activityID: "1", activityType: "x.y", webpageURL: "https://news.example.org@evil.test/")
            == .open(app: browser, route: .browser, uris: ["https://news.example.org@evil.test/"]))
    }

    @Test func browsingWebPrefersTheDomainClaimOverAGeneralWebHandler() {
        let r = resolver([webApp, reader], browser: browser)
        #expect(r.plan(activityID: "1", activityType: WellKnownActivityType.browsingWeb, webpageURL: "https://news.example.org/a")
            == .open(app: reader, route: .domain, uris: ["https://news.example.org/a"]))
        #expect(r.plan(activityID: "1", activityType: WellKnownActivityType.browsingWeb, webpageURL: "https://elsewhere.test/")
            == .open(app: webApp, route: .handler, uris: ["handoff:continued/1"]))
    }

    @Test func nothingToOpenSaysWhy() {
        guard case .nothing(let code, let message) = resolver([editor], browser: browser).plan(activityID: "1", activityType: "org.example.none", webpageURL: nil)
        else { Issue.record("expected nothing"); return }
        #expect(code == "no_handler" && message.contains("X-Handoff-ActivityTypes=org.example.none"))
        guard case .nothing(let code2, _) = resolver([editor]).plan(activityID: "1", activityType: "org.example.none", webpageURL: "https://a.test/")
        else { Issue.record("expected nothing"); return }
        #expect(code2 == "no_browser")
    }

    @Test func declarationsParseStrictly() {
        let types = HandlerDeclaration.activityTypes("org.example.a; org.example.b;;../../etc;<x>;org.example.a;single")
        #expect(types.valid == ["org.example.a", "org.example.b"])
        #expect(types.rejected == ["../../etc", "<x>", "single"])
        let domains = HandlerDeclaration.domains("Example.ORG;*.b.example.org;*;*.;a..b;exa mple.org;-bad.org;" + String(repeating: "x", count: 64) + ".org")
        #expect(domains.valid.map(\.description) == ["example.org", "*.b.example.org"])
        #expect(domains.rejected.count == 6)
        #expect(HandlerDeclaration.activityTypes(String(repeating: "a.b;", count: 100_000)).valid == ["a.b"])
    }
}

@Suite("Notification policy")
struct NotificationPolicyTests {
    let desk = PeerDevice(id: "DESK", name: "desk"), laptop = PeerDevice(id: "LAP", name: "laptop")

    func summary(_ id: String, title: String = "t", expires: Timestamp? = nil) -> ActivitySummary {
        var a = Activity(id: ActivityID(String(repeating: id, count: 32))!, activityType: "org.example.x", title: title, createdAt: at(0), origin: DeviceRef(name: "desk", id: nil))
        a.expirationDate = expires
        return ActivitySummary(a, payloadSize: 10)
    }

    func at(_ s: Int64) -> Timestamp { Timestamp(seconds: 1_800_000_000 + s) }

    @Test func showsOnceReplacesPerDeviceAndClosesWhenWithdrawn() {
        var p = NotificationPolicy()
        #expect(p.offer(from: desk, summary("a"), at: at(0)) == [.show(device: desk, summary: summary("a"), replacing: nil)])
        p.shown(desk, notification: 7)
        // Updates of the same activity are quiet.
        #expect(p.offer(from: desk, summary("a", title: "changed"), at: at(30)).isEmpty)
        // A new activity from the same device replaces its notification.
        #expect(p.offer(from: desk, summary("b"), at: at(40)) == [.show(device: desk, summary: summary("b"), replacing: 7)])
        p.shown(desk, notification: 7)
        #expect(p.target(of: 7)?.activity == summary("b").id)
        #expect(p.offer(from: desk, nil, at: at(50)) == [.close(7)])
        #expect(p.target(of: 7) == nil)
    }

    @Test func goingBackToTheShownActivityDropsWhatWasHeldBack() {
        var p = NotificationPolicy(intervalSeconds: 10)
        _ = p.offer(from: desk, summary("a"), at: at(0))
        p.shown(desk, notification: 1)
        #expect(p.offer(from: desk, summary("b"), at: at(2)) == [.wake(at: at(10))])
        #expect(p.offer(from: desk, summary("a"), at: at(3)).isEmpty)
        #expect(p.wake(at: at(10)).isEmpty, "b is no longer offered")
    }

    @Test func expiredOffersAreNotShown() {
        var p = NotificationPolicy()
        #expect(p.offer(from: desk, summary("a", expires: at(5)), at: at(10)).isEmpty)
    }

    @Test func aBurstIsHeldBackAndTheLatestShownWhenDue() {
        var p = NotificationPolicy(intervalSeconds: 10)
        _ = p.offer(from: desk, summary("a"), at: at(0))
        p.shown(desk, notification: 1)
        #expect(p.offer(from: desk, summary("b"), at: at(2)) == [.wake(at: at(10))])
        #expect(p.offer(from: desk, summary("c"), at: at(3)) == [.wake(at: at(10))])
        #expect(p.wake(at: at(10)) == [.show(device: desk, summary: summary("c"), replacing: 1)])
        // Other devices have their own interval.
        #expect(p.offer(from: laptop, summary("d"), at: at(11)) == [.show(device: laptop, summary: summary("d"), replacing: nil)])
    }

    @Test func globalRateLimitHolds() {
        var p = NotificationPolicy(intervalSeconds: 0, perMinute: 2)
        _ = p.offer(from: desk, summary("a"), at: at(0))
        _ = p.offer(from: laptop, summary("b"), at: at(1))
        #expect(p.offer(from: PeerDevice(id: "X", name: "x"), summary("c"), at: at(2)) == [.wake(at: at(60))])
    }

    @Test func disabledShowsNothingButStillCloses() {
        var p = NotificationPolicy(enabled: false)
        #expect(p.offer(from: desk, summary("a"), at: at(0)).isEmpty)
    }

    @Test func disconnectClosesTheDevicesNotification() {
        var p = NotificationPolicy()
        _ = p.offer(from: desk, summary("a"), at: at(0))
        p.shown(desk, notification: 3)
        #expect(p.disconnected(desk) == [.close(3)])
        #expect(p.disconnected(desk).isEmpty)
    }
}

@Suite("Session configuration")
struct SessionConfigurationTests {
    @Test func parsesAndRefusesWithLineNumbers() throws {
        let c = try SessionConfiguration(parsing: "# mine\nnotifications = no\nhandler.org.example.edit = org.gnome.TextEditor.desktop\n", path: "f")
        #expect(c.notifications == false && c.handlers == ["org.example.edit": "org.gnome.TextEditor.desktop"])
        for (text, needle) in [("loud = yes", "f:1: unknown setting"), ("notifications = maybe", "yes or no"),
                               ("handler.bad = x.desktop", "not an activity type"), ("handler.a.b = /usr/bin/x", "desktop id"), ("junk", "key = value")] {
            #expect(throws: SessionConfiguration.FileError.self) { try SessionConfiguration(parsing: text, path: "f") }
            do { _ = try SessionConfiguration(parsing: text, path: "f") } catch { #expect("\(error)".contains(needle), "\(error)") }
        }
    }

    /// `handoffctl sources off media` rewrites one line and keeps the rest of the user's file.
    @Test func settingALineKeepsTheRest() throws {
        let text = "# my settings\nnotifications = no\nmedia = yes   # the player\n\nhandler.a.b = x.desktop\n"
        let off = SessionConfiguration.setting("media", to: "no", in: text)
        #expect(off == "# my settings\nnotifications = no\nmedia = no\n\nhandler.a.b = x.desktop\n")
        #expect(try SessionConfiguration(parsing: off, path: "f").media == false)
        let appended = SessionConfiguration.setting("browser", to: "no", in: off)
        #expect(appended.hasSuffix("handler.a.b = x.desktop\nbrowser = no\n"))
        #expect(try SessionConfiguration(parsing: appended, path: "f").browser == false)
        #expect(SessionConfiguration.setting("media", to: "no", in: "") == "media = no\n")
        // A commented-out line is not the setting.
        #expect(SessionConfiguration.setting("media", to: "no", in: "# media = yes\n") == "# media = yes\nmedia = no\n")
    }

    /// Found by fuzz-local-input: "\r\n" is one Character, so a CRLF file read as a single
    /// line, and a setting written back after a repeated key did not take.
    @Test func crlfFilesAndRepeatedKeys() throws {
        let c = try SessionConfiguration(parsing: "notifications = no\r\nmedia = no\r\n", path: "f")
        #expect(c.notifications == false && c.media == false)
        #expect(try SessionConfiguration(parsing: "\r", path: "f") == SessionConfiguration())
        let twice = "media = yes\nbrowser = no\nmedia = yes\n"
        let off = SessionConfiguration.setting("media", to: "no", in: twice)
        #expect(off == "media = no\nbrowser = no\n")
        #expect(try SessionConfiguration(parsing: off, path: "f").media == false)
        #expect(SessionConfiguration.setting("media", to: "no", in: "\r") == "media = no\n")
    }
}
