import Foundation
import HandoffTestSupport
import Testing

/// `handoffctl sources`: the session agent's sources listed and switched through handoffd,
/// the way a user meets them. A real mpv plays on a; turning media off ends its activity
/// and keeps it off in handoff-session.conf; an app's own activity is never displaced by a
/// source; the browser host's tab ends when the browser source is turned off. Root only.
extension WorkstationTests {
@Suite(.enabled(if: FileManager.default.fileExists(atPath: "/etc/mpv/scripts/mpris.so"), "needs mpv and mpv-mpris"))
struct DesktopSourcesTests {
    static let browserDriver = #"""
        import json, struct, subprocess, sys
        host = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        def tab(url):
            body = json.dumps({"type": "tab", "url": url, "title": url, "incognito": False}).encode()
            host.stdin.write(struct.pack("=I", len(body)) + body); host.stdin.flush()
            n = struct.unpack("=I", host.stdout.read(4))[0]
            return json.loads(host.stdout.read(n))
        ctl = lambda *a: subprocess.run([sys.argv[2], *a], capture_output=True, text=True)
        out = {"ack1": tab("https://first.example/")}
        out["current1"] = ctl("current", "--json").stdout
        out["off"] = ctl("sources", "off", "browser").stdout
        out["current2"] = ctl("current", "--json").stdout
        out["ack2"] = tab("https://second.example/")
        out["on"] = ctl("sources", "on", "browser").stdout
        out["ack3"] = tab("https://third.example/")
        host.stdin.close(); host.wait(10)
        print(json.dumps(out))
        """#

    func json(_ text: String) throws -> [String: Any] {
        guard let o = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { throw TestFailure("not JSON: \(text)") }
        return o
    }

    func source(_ net: NetnsRun, _ name: String) async throws -> [String: Any] {
        let r = try await net.ctl("a", "sources", "--json")
        let list = try json(r.stdout)["sources"] as? [[String: Any]] ?? []
        guard let s = list.first(where: { $0["name"] as? String == name }) else { throw TestFailure("no \(name) in \(r)") }
        return s
    }

    @Test func sourcesAreListedAndSwitchedAndNeverDisplaceAnAppsActivity() async throws {
        try await NetnsRun.with(["a"]) { net in
            try await net.startDaemon("a")
            // Without the agent, the command says what to start.
            let none = try await net.ctl("a", "sources")
            #expect(none.status == 1 && none.stderr.contains("systemctl --user start handoff-session"), "\(none)")

            let desk = try DesktopSession(net, host: "a")
            defer { desk.stop() }
            try await desk.startBus()
            let music = net.directory + "/music"
            try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
            #expect(try await net.exec("a", ["sox", "-n", "-r", "8000", "-c", "1", music + "/tone.wav", "synth", "300", "sine", "440"]).status == 0)
            _ = try await net.spawn("a", log: desk.root + "/mpv.log", ["mpv", "--ao=null", "--vo=null", "--no-terminal", "--keep-open=yes",
                                                                      music + "/tone.wav"], environment: desk.environment)
            try await desk.startAgent(["--no-notifications"])
            func current() async throws -> String { try await net.ctl("a", "current", "--json").stdout }
            try await eventually(15, "mpv's playback to be a's activity") { try await current().contains("handoff.media") }

            let media = try await source(net, "media")
            #expect(media["enabled"] as? Bool == true)
            #expect((media["detail"] as? String)?.contains("following 1 player; offering") == true, "\(media)")
            #expect(try await source(net, "recent-documents")["enabled"] as? Bool == true)
            #expect((try await source(net, "browser")["detail"] as? String)?.contains("handoff-browser-host --install") == true)
            let listed = try await net.ctl("a", "sources")
            #expect(listed.status == 0 && listed.stdout.contains("media") && listed.stdout.contains("on "), "\(listed)")

            // Off: the activity ends, the setting stays in the file, and a seek offers nothing.
            let off = try await net.ctl("a", "sources", "off", "media")
            #expect(off.status == 0 && off.stdout.contains("off (media = no in"), "\(off)")
            try await eventually(10, "the media activity to end") { try await !current().contains("handoff.media") }
            let conf = (try? String(contentsOfFile: desk.configHome + "/handoff/handoff-session.conf", encoding: .utf8)) ?? ""
            #expect(conf.contains("media = no"), "\(conf)")
            _ = try await desk.run(["playerctl", "-p", "mpv", "position", "30"])
            // A source still following mpv would offer within milliseconds of its signals;
            // 1.5 s of nothing shows it does not.
            try await never(within: 1.5, because: "the media source, turned off, offered the seek") { try await current().contains("handoff.media") }

            // An app's own activity is current: turning media on does not displace it...
            let mine = try await net.ctl("a", "become-current", "--type", "org.example.notes.edit", "--title", "My note", "--json")
            let mineID = try json(mine.stdout)["id"] as? String ?? ""
            let on = try await net.ctl("a", "sources", "on", "media")
            #expect(on.status == 0 && on.stdout.contains("an app's own activity is current"), "\(on)")
            // The agent answers only after it has brought the sources in line (starting media
            // and deciding whether to offer what plays): its answer is the fact to check after.
            #expect(try await current().contains("org.example.notes.edit"), "the app's activity stays current")
            // ...and when it ends, what plays is offered again.
            #expect(try await net.ctl("a", "invalidate", mineID).status == 0)
            try await eventually(10, "media to be offered again") { try await current().contains("handoff.media") }

            // Unknown sources and bad words are clear errors.
            let unknown = try await net.ctl("a", "sources", "off", "telepathy")
            #expect(unknown.status == 1 && unknown.stderr.contains("the sources are media, recent-documents, browser, clipboard, tray"), "\(unknown)")
            let bad = try await net.ctl("a", "sources", "maybe", "media")
            #expect(bad.status == 2, "\(bad)")

            // The browser source: off ends the host's tab at once; the host then offers nothing.
            let r = try await net.exec("a", ["env"] + desk.environment.map { "\($0.key)=\($0.value)" } + [
                "HANDOFF_SOCKET=\(net.socket("a"))", "/usr/bin/python3", "-c", Self.browserDriver,
                try TestEnvironment.binary("handoff-browser-host"), try TestEnvironment.binary("handoffctl"),
            ])
            let o = try json(String(r.stdout.split(separator: "\n").last ?? ""))
            #expect((o["current1"] as? String)?.contains("first.example") == true, "\(o)")
            #expect((o["off"] as? String)?.contains("off (browser = no") == true, "\(o)")
            #expect((o["current2"] as? String)?.contains("first.example") == false, "turning the source off ends the tab's offer: \(o)")
            #expect((o["ack2"] as? [String: Any])?["offered"] as? Bool == false, "\(o)")
            #expect((o["ack3"] as? [String: Any])?["offered"] as? Bool == true, "\(o)")
        }
    }
}
}
