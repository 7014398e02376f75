import Foundation
import Testing

/// The shipped extension in a real browser: headless Chromium from Debian loads
/// `extension/` unpacked, starts `handoff-browser-host` from the manifest `--install`
/// wrote, and its focused tab becomes a's activity; b's session agent opens it. Pages come
/// from a web server on a's loopback (news.example.org is mapped there). Root only.
extension WorkstationTests {
@Suite struct ChromiumExtensionTests {
    static let chromium = "/usr/bin/chromium"

    @Test func focusedTabFollowsTheUserToTheOtherWorkstation() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.chromium) else {
            throw TestFailure("chromium is not installed: run scripts/install-deps")
        }
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let desk = try DesktopSession(net, host: "b")
            defer { desk.stop() }
            try desk.addEntry("org.example.Reader.desktop", name: "Reader", lines: ["X-Handoff-Domains=news.example.org;"], recordAs: "reader")
            try desk.addEntry("test-browser.desktop", name: "Test Browser", lines: ["MimeType=x-scheme-handler/http;x-scheme-handler/https;"],
                              recordAs: "browser")
            try desk.setDefaultBrowser("test-browser.desktop")
            try await desk.startBus()
            try await desk.startAgent(["--no-notifications"])

            // a's user installs the host as Docs/Desktop.md says.
            let home = net.directory + "/a-home"
            let env = ["HOME=\(home)", "XDG_CONFIG_HOME=\(home)/.config"]
            let installed = try await net.exec("a", ["env"] + env + [try TestEnvironment.binary("handoff-browser-host"), "--install"])
            #expect(installed.status == 0, "\(installed)")
            #expect(installed.stdout.contains("\(home)/.config/chromium/NativeMessagingHosts/org.handoff.browser.json"), "\(installed)")

            let pages = net.directory + "/pages"
            try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
            try "<html><head><title>Story of the day</title></head><body>story</body></html>".write(toFile: pages + "/story.html", atomically: true, encoding: .utf8)
            try "<html><head><title>Another story</title></head><body>other</body></html>".write(toFile: pages + "/other.html", atomically: true, encoding: .utf8)
            _ = try await net.spawn("a", log: net.directory + "/web.log", ["/usr/bin/python3", "-m", "http.server", "8765", "--bind", "127.0.0.1", "--directory", pages])
            try await eventually(10, "the web server on a") { try await net.exec("a", ["curl", "-sf", "http://127.0.0.1:8765/story.html"]).status == 0 }

            let story = "http://news.example.org:8765/story.html", other = "http://news.example.org:8765/other.html"
            let chrome = try await net.spawn("a", log: net.directory + "/chromium.log", [
                // Headless Chromium takes a throwaway profile unless told otherwise, and looks
                // for host manifests in its profile: name the one a desktop Chromium uses.
                Self.chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=9333",
                "--user-data-dir=\(home)/.config/chromium",
                "--host-resolver-rules=MAP news.example.org 127.0.0.1",
                "--load-extension=\(TestEnvironment.packageRoot)/extension", "--disable-extensions-except=\(TestEnvironment.packageRoot)/extension",
                story,
            ], environment: ["HOME": home, "XDG_CONFIG_HOME": home + "/.config"])
            func current() async throws -> String { try await net.ctl("a", "current", "--json").stdout }
            do {
                try await eventually(60, "Chromium's tab to become a's activity") {
                    let c = try await current()
                    return c.contains(story) && c.contains("Story of the day")
                }
            } catch {
                // The evidence: the host's own lines (its stderr is Chromium's), the tail of
                // Chromium's log, and the tabs as DevTools sees them.
                let log = (try? String(contentsOfFile: net.directory + "/chromium.log", encoding: .utf8)) ?? ""
                let lines = log.split(separator: "\n")
                let host = lines.filter { $0.contains("handoff-browser-host") || $0.contains("org.handoff.browser") || $0.contains("xtension") }
                let tabs = (try? await net.exec("a", ["curl", "-s", "http://127.0.0.1:9333/json/list"]).stdout) ?? ""
                throw TestFailure("\(error)\n--- chromium: the host and the extension ---\n\(host.suffix(20).joined(separator: "\n"))"
                                  + "\n--- chromium: the end ---\n\(lines.suffix(15).joined(separator: "\n"))\n--- tabs ---\n\(tabs)")
            }
            #expect(try await current().contains("handoff.browsing-web"))

            // b continues: the app claiming the domain opens the page.
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains("Story of the day") }
            let continued = try await net.ctl("b", "continue")
            #expect(continued.status == 0 && continued.stdout.contains("in Reader"), "\(continued)")
            #expect(try await desk.waitForRecord("reader")["argv"] as? [String] == [story])

            // A page that is not on the web ends the offer; a web page is offered again.
            func open(_ url: String) async throws {
                let r = try await net.exec("a", ["curl", "-sf", "-X", "PUT", "http://127.0.0.1:9333/json/new?\(url)"])
                #expect(r.status == 0, "DevTools: \(r)")
            }
            try await open("file:///etc/hostname")
            try await eventually(15, "a non-web tab to end the offer") { try await !current().contains(story) }
            #expect(try await !current().contains("hostname"), "nothing of the non-web tab is offered")
            try await open(other)
            try await eventually(15, "the other page to be offered") { try await current().contains("Another story") }

            // The browser closes: its host ends, and the activity with it.
            net.stop(chrome, SIGTERM)
            _ = try await net.wait(chrome, timeout: 15)
            try await eventually(15, "the activity to end with the browser") { try await !current().contains(other) }
        }
    }
}
}
