import Foundation
import HandoffTestSupport
import Testing

/// The shipped extension in Debian's Firefox ESR, headless: a fresh profile holds it as an
/// unsigned .xpi (ESR honours `xpinstall.signatures.required = false`), Firefox starts
/// `handoff-browser-host` from the manifest `--install` wrote in ~/.mozilla, and the
/// focused tab becomes a's activity; b's session agent opens it. A private window never
/// becomes the activity; closing Firefox ends it. Tabs and windows are opened through
/// Marionette (Tests/Fixtures/firefox-driver). Pages come from a web server on a's
/// loopback (news.example.org resolves there). Root only.
extension WorkstationTests {
@Suite struct FirefoxExtensionTests {
    static let firefox = "/usr/bin/firefox-esr"
    static var driver: String { TestEnvironment.packageRoot + "/Tests/Fixtures/firefox-driver" }

    @Test func focusedTabFollowsTheUserAndAPrivateWindowNeverDoes() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.firefox) else {
            throw TestFailure("firefox-esr is not installed: run scripts/install-deps")
        }
        try await NetnsRun.with(["a", "b"]) { net in
            let hosts = try await BrowserTestHosts.start(net, manifest: ".mozilla/native-messaging-hosts/org.handoff.browser.json",
                                                         pages: [("story", "Story of the day"), ("other", "Another story"), ("private", "Secret page")])
            let (desk, home) = (hosts.desk, hosts.home)
            defer { desk.stop() }

            let profile = home + "/firefox-profile", port = "2828"
            let made = try await net.exec("a", ["/usr/bin/python3", Self.driver, "profile", profile, TestEnvironment.packageRoot + "/extension", port, BrowserTestHosts.domain])
            #expect(made.status == 0, "\(made)")
            let story = BrowserTestHosts.url("story"), other = BrowserTestHosts.url("other")
            let browser = try await net.spawn("a", log: net.directory + "/firefox.log", [
                Self.firefox, "--headless", "--no-remote", "--marionette", "--remote-allow-system-access", "-profile", profile, story,
            ], environment: ["HOME": home, "XDG_CONFIG_HOME": home + "/.config"])
            func current() async throws -> String { try await net.ctl("a", "current", "--json").stdout }
            func drive(_ args: [String]) async throws -> String {
                let r = try await net.exec("a", ["/usr/bin/python3", Self.driver, port] + args)
                #expect(r.status == 0, "firefox-driver \(args): \(r)")
                return r.stdout
            }
            do {
                try await eventually(60, "Firefox's tab to become a's activity") {
                    let c = try await current()
                    return c.contains(story) && c.contains("Story of the day")
                }
            } catch {
                let log = (try? String(contentsOfFile: net.directory + "/firefox.log", encoding: .utf8)) ?? ""
                throw TestFailure("\(error)\n--- firefox: the end ---\n\(log.split(separator: "\n").suffix(25).joined(separator: "\n"))")
            }
            #expect(try await current().contains("handoff.browsing-web"))

            // b continues: the app claiming the domain opens the page.
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains("Story of the day") }
            let continued = try await net.ctl("b", "continue")
            #expect(continued.status == 0 && continued.stdout.contains("in Reader"), "\(continued)")
            #expect(try await desk.waitForRecord("reader")["argv"] as? [String] == [story])

            // Another tab, focused: it is offered.
            _ = try await drive(["open", other])
            try await eventually(15, "the other tab to be offered") { try await current().contains("Another story") }

            // A private window, focused, at its own page: the extension never sees it
            // (Firefox keeps private windows from extensions not allowed in them), so
            // nothing of it is offered; the last public page stays.
            #expect(try await drive(["private", BrowserTestHosts.url("private")]).contains("true"))
            try await eventually(15, "the private window to show its page") {
                let windows = try await drive(["windows"])
                return windows.contains("\"private\": true, \"url\": \"\(BrowserTestHosts.url("private"))\"")
            }
            // 2 s: the extension offers a focused public page in well under that.
            try await never(within: 2, because: "the private page was offered") {
                let now = try await current()
                return now.contains("private.html") || now.contains("Secret page")
            }
            #expect(try await current().contains("Another story"))

            // Firefox closes: its host ends, and the activity with it.
            net.stop(browser, SIGTERM)
            let exited = try await net.wait(browser, timeout: 30)
            do {
                #expect(exited != nil, "Firefox did not end within 30 s of SIGTERM")
                try await eventually(15, "the activity to end with the browser") { try await !current().contains(other) }
            } catch {
                let ps = (try? await net.exec("a", ["ps", "-eo", "pid,ppid,stat,args"]).stdout) ?? ""
                let log = (try? String(contentsOfFile: net.directory + "/firefox.log", encoding: .utf8)) ?? ""
                throw TestFailure("\(error)\n--- processes ---\n\(ps.split(separator: "\n").filter { $0.contains("firefox") || $0.contains("handoff-browser") }.joined(separator: "\n"))"
                                  + "\n--- firefox: the end ---\n\(log.split(separator: "\n").suffix(15).joined(separator: "\n"))")
            }
        }
    }
}
}
