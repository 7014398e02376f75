import Foundation
import HandoffTestSupport
import Testing

/// What the browser tests share: a and b paired, b's desktop session with an app claiming
/// news.example.org (`Reader`), the host installed for a's user as Docs/Desktop.md says,
/// and a web server on a's loopback serving `pages` (file name to title).
struct BrowserTestHosts {
    let desk: DesktopSession
    /// a's user's home.
    let home: String
    static let domain = "news.example.org"
    static let port = 8765

    static func url(_ page: String) -> String { "http://\(domain):\(port)/\(page).html" }

    /// `manifest`: where `--install` must say it wrote the host's manifest for this browser.
    static func start(_ net: NetnsRun, manifest: String, pages: [(file: String, title: String)],
                      entries: (DesktopSession) throws -> Void = { _ in }) async throws -> BrowserTestHosts {
        try await net.startDaemon("a")
        try await net.startDaemon("b")
        try await net.pair("a", "b")
        let desk = try DesktopSession(net, host: "b")
        do {
            try desk.addEntry("org.example.Reader.desktop", name: "Reader", lines: ["X-Handoff-Domains=\(domain);"], recordAs: "reader")
            try entries(desk)
            try await desk.startBus()
            try await desk.startAgent(["--no-notifications"])

            let home = net.directory + "/a-home"
            let env = ["HOME=\(home)", "XDG_CONFIG_HOME=\(home)/.config"]
            let installed = try await net.exec("a", ["env"] + env + [try TestEnvironment.binary("handoff-browser-host"), "--install"])
            #expect(installed.status == 0 && installed.stdout.contains(home + "/" + manifest), "\(installed)")

            let dir = net.directory + "/pages"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for (file, title) in pages {
                try "<html><head><title>\(title)</title></head><body>\(file)</body></html>".write(toFile: "\(dir)/\(file).html", atomically: true, encoding: .utf8)
            }
            _ = try await net.spawn("a", log: net.directory + "/web.log",
                                    ["/usr/bin/python3", "-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory", dir])
            try await eventually(10, "the web server on a") {
                try await net.exec("a", ["curl", "-sf", "http://127.0.0.1:\(port)/\(pages[0].file).html"]).status == 0
            }
            return BrowserTestHosts(desk: desk, home: home)
        } catch {
            desk.stop()
            throw error
        }
    }
}
