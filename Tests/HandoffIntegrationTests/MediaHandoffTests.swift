import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

/// Media follows the user without any app changing: a real mpv with mpv-mpris plays on a;
/// the session agent there makes it the current activity; on b, continuing plays the same
/// file (from b's own copy in the same synced folder) in b's mpv, at the position a had
/// reached at that moment, and a's mpv pauses. Root only.
extension WorkstationTests {
@Suite(.enabled(if: FileManager.default.fileExists(atPath: "/etc/mpv/scripts/mpris.so"), "needs mpv and mpv-mpris"))
struct MediaHandoffTests {
    static let folderID = "media-folder-1"

    func desk(_ d: DesktopSession) -> DesktopSession { d }

    func playerctl(_ desk: DesktopSession, _ args: String...) async throws -> String {
        try await desk.run(["playerctl", "-p", "mpv"] + args).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `synced`: b has the file in the same Syncthing folder (at another path); else b has
    /// no copy and plays one fetched from a over a continuation stream.
    @Test(arguments: [(pauseOrigin: true, synced: true), (pauseOrigin: false, synced: true), (pauseOrigin: true, synced: false)])
    func playbackContinuesAtThePositionOnTheOtherWorkstation(pauseOrigin: Bool, synced: Bool) async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            // The same file in the same Syncthing folder on both, at different paths.
            let sync = ["a": net.directory + "/a/Music", "b": net.directory + "/b/Elsewhere/Music"]
            for (host, path) in sync where synced || host == "a" {
                try FileManager.default.createDirectory(atPath: net.directory + "/\(host)/state/syncthing", withIntermediateDirectories: true)
                try "<configuration><folder id=\"\(Self.folderID)\" path=\"\(path)\"></folder></configuration>"
                    .write(toFile: net.directory + "/\(host)/state/syncthing/config.xml", atomically: true, encoding: .utf8)
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                let made = try await net.exec(host, ["sox", "-n", "-r", "8000", "-c", "1", path + "/tone.wav", "synth", "180", "sine", "440"])
                #expect(made.status == 0, "\(made)")
            }
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            var desks: [String: DesktopSession] = [:]
            for host in ["a", "b"] {
                let desk = try DesktopSession(net, host: host)
                try await desk.startBus()
                desks[host] = desk
            }
            defer { for d in desks.values { d.stop() } }
            let a = desks["a"]!, b = desks["b"]!
            // a's mpv plays the file. b runs no player: continuing starts b's mpv (its desktop
            // entry, as installed, with null outputs for the test).
            _ = try await net.spawn("a", log: a.root + "/mpv.log", ["mpv", "--ao=null", "--vo=null", "--no-terminal", "--keep-open=yes",
                                                                   sync["a"]! + "/tone.wav"], environment: a.environment)
            try await eventually(15, "mpv's MPRIS name on a") { try await playerctl(a, "status") == "Playing" }
            try b.addEntry("mpv.desktop", name: "mpv Media Player", lines: ["MimeType=audio/x-wav;audio/wav;"],
                           exec: "mpv --ao=null --vo=null --no-terminal --keep-open=yes -- %U")
            // mpv is b's default player for the file's type (the origin never picks the app).
            try "[Default Applications]\naudio/x-wav=mpv.desktop\naudio/wav=mpv.desktop\n"
                .write(toFile: b.configHome + "/mimeapps.list", atomically: true, encoding: .utf8)
            if !pauseOrigin {
                try "pause-origin = no\n".write(toFile: a.configHome + "/handoff/handoff-session.conf", atomically: true, encoding: .utf8)
            }
            try await a.startAgent(["--no-notifications"])
            // The shared MIME database (/usr/share/mime) tells b what the file is.
            try await b.startAgent(["--no-notifications"], environment: ["XDG_DATA_DIRS": b.root + "/system:/usr/share"])
            try await eventually(15, "a's playback to be the current activity") {
                try await net.ctl("a", "current").stdout.contains("handoff.media")
            }
            // a's agent learns of the seek from mpv's Seeked signal: watch a's bus for it.
            let seekLog = a.root + "/seeked.log"
            let monitor = try await net.spawn("a", log: seekLog, ["dbus-monitor", "--address", a.busAddress,
                                                                  "interface='org.mpris.MediaPlayer2.Player',member='Seeked'"])
            defer { net.stop(monitor, SIGTERM) }
            func monitored() -> String { (try? String(contentsOfFile: seekLog, encoding: .utf8)) ?? "" }
            // dbus-monitor gives up its name once it monitors: from then on it sees every Seeked.
            try await eventually(10, "dbus-monitor to monitor") { monitored().contains("member=NameLost") }
            _ = try await playerctl(a, "position", "42")
            // The bus has sent the signal to every listener, a's agent too.
            try await eventually(10, "mpv to announce the seek") { monitored().contains("member=Seeked") }
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains("handoff.media") }
            let r = try await net.ctl("b", "continue")
            #expect(r.status == 0, "\(r)\n\(b.log)")
            #expect(r.stdout.contains("opened in mpv") && r.stdout.contains("playing from 0:4"), "\(r)")
            #expect(r.stdout.contains(synced ? "your own copy in the synced folder" : "a copy fetched from ws-a"), "\(r)")
            // b plays b's own copy, from where a was (42 s plus the moments since, ± 2.5 s).
            do {
                try await eventually(10, "b's mpv to play") { try await playerctl(b, "status") == "Playing" }
            } catch {
                let st = try await playerctl(b, "status"), pos = try await playerctl(b, "position"), md = try await desk(b).run(["playerctl", "-p", "mpv", "metadata"]).stdout
                throw TestFailure("\(error)\nb: \(st) at \(pos); \(md)\ncontinue: \(r)\nb's agent:\n\(b.log)\nb's mpv:\n\((try? String(contentsOfFile: b.root + "/mpv.log", encoding: .utf8)) ?? "")")
            }
            let position = Double(try await playerctl(b, "position")) ?? -1
            #expect(abs(position - 43) <= 2.5, "b plays at \(position) s\n\(b.log)")
            let url = try await playerctl(b, "metadata", "xesam:url")
            #expect(url.hasSuffix(synced ? "/Elsewhere/Music/tone.wav" : "/tone.wav"), "\(url)")
            if !synced { #expect(url.contains("/handoff/documents/"), "b plays the fetched copy: \(url)") }
            if pauseOrigin {
                // a paused, as someone moving rooms expects.
                try await eventually(10, "a's mpv to pause") { try await playerctl(a, "status") == "Paused" }
            } else {
                // Told not to: a plays on. a's agent would pause mpv as soon as was-continued
                // reached it, about when b's mpv starts; 2 s more of playing shows it did not.
                try await never(within: 2, because: "a's mpv stopped playing though told not to pause") { try await playerctl(a, "status") != "Playing" }
            }
        }
    }
}
}

extension WorkstationTests {
@Suite struct SessionAgentIdleTests {
    /// All sources on (media watching the session bus), nothing playing, notifications on:
    /// the agent sleeps. A once-a-second wake-up (libdispatch's default executor) would
    /// show as 10 here.
    @Test func theAgentDoesNotWakeUpAtIdle() async throws {
        try await NetnsRun.with(["a"]) { net in
            try await net.startDaemon("a")
            let desk = try DesktopSession(net, host: "a")
            defer { desk.stop() }
            try await desk.startBus()
            try await desk.startAgent()
            guard let pid = desk.agent else { throw TestFailure("no agent pid") }
            // handoffd restarts: the agent waits, reconnects and takes the role again (a sleep
            // on libdispatch's executor would leave its monitor thread ticking for ever).
            await net.kill("a")
            // The agent has noticed, and has tried again once after its first wait: it is in
            // its second wait (2 s) now.
            try await eventually(10, "the agent to wait to reconnect") { desk.log.contains("trying again in 2 s") }
            try await net.startDaemon("a")
            try await eventually(30, "the agent to take the launcher role again") {
                try await net.ctl("a", "status", "--json").stdout.contains("\"launcher\": true")
            }
            /// Context switches per thread ("name/tid").
            func switches() -> [String: Int] {
                let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
                var out: [String: Int] = [:]
                for t in tasks {
                    let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(t)/status", encoding: .utf8)) ?? ""
                    let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(t)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
                    out["\(name)/\(t)"] = status.split(separator: "\n").filter { $0.contains("ctxt_switches") }
                        .compactMap { Int($0.split(separator: "\t").last ?? "") }.reduce(0, +)
                }
                return out
            }
            // Start-up is over once the agent answers from its event loop (it reaches the
            // loop only after its start-up work): `sources` goes through it.
            try await eventually(10, "the agent to answer from its event loop") { try await net.ctl("a", "sources").status == 0 }
            let before = switches()
            // Time is what is tested: the wake-ups of an idle agent in 10 s.
            try await Task.sleep(nanoseconds: 10_000_000_000)
            let after = switches()
            let woke = after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
            let busy = after.filter { $0.value != before[$0.key] }.map { "\($0.key): \($0.value - (before[$0.key] ?? 0))" }
            #expect(woke <= 2, "the idle agent woke \(woke) times in 10 s: \(busy)\n\(desk.log)")
        }
    }
}
}
