import Foundation
import HandoffTestSupport
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
            let hosts = try await BrowserTestHosts.start(net, manifest: ".config/chromium/NativeMessagingHosts/org.handoff.browser.json",
                                                         pages: [("story", "Story of the day"), ("other", "Another story")]) { desk in
                try desk.addEntry("test-browser.desktop", name: "Test Browser", lines: ["MimeType=x-scheme-handler/http;x-scheme-handler/https;"],
                                  recordAs: "browser")
                try desk.setDefaultBrowser("test-browser.desktop")
            }
            let (desk, home) = (hosts.desk, hosts.home)
            defer { desk.stop() }
            let story = BrowserTestHosts.url("story"), other = BrowserTestHosts.url("other")
            let chrome = try await net.spawn("a", log: net.directory + "/chromium.log", [
                // Headless Chromium takes a throwaway profile unless told otherwise, and looks
                // for host manifests in its profile: name the one a desktop Chromium uses.
                // --enable-logging=stderr: the extension's console (why the host went away)
                // and Chromium's native-messaging warnings in its log, for a failure to show.
                Self.chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=9333",
                "--enable-logging=stderr",
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
                let host = lines.filter {
                    $0.contains("handoff-browser-host") || $0.contains("org.handoff.browser") || $0.contains("xtension") || $0.contains("messaging")
                }
                let tabs = (try? await net.exec("a", ["curl", "-s", "http://127.0.0.1:9333/json/list"]).stdout) ?? ""
                // The host's process, if Chromium started one, and where it waits.
                let hosts = (try? await net.exec("a", ["sh", "-c", "for p in $(pgrep -f handoff-browser-host); do "
                                                       + "echo \"$p $(cat /proc/$p/wchan 2>/dev/null) $(tr '\\0' ' ' </proc/$p/cmdline)\"; "
                                                       + "grep -E '^(State|Threads)' /proc/$p/status; done"]).stdout) ?? ""
                let current = (try? await net.ctl("a", "status").stdout) ?? ""
                throw TestFailure("\(error)\n--- chromium: the host and the extension ---\n\(host.suffix(20).joined(separator: "\n"))"
                                  + "\n--- chromium: the end ---\n\(lines.suffix(15).joined(separator: "\n"))\n--- tabs ---\n\(tabs)"
                                  + "\n--- host processes ---\n\(hosts)\n--- a's status ---\n\(current)")
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
