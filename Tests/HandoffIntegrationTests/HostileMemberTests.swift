import Foundation
import HandoffClient
import HandoffControlAPI
import HandoffCore
import HandoffTestSupport
import Testing

/// A paired member gone bad (Security.md 3.6): malware with its certificate and key speaks
/// the peer protocol by hand (Tests/Fixtures/hostile-keeper) to a handoffd on loopback.
@Suite struct HostileMemberTests {
    /// It asks for activities the origin does not offer now: one it offered before, one of
    /// another app, one that never was. Only the current one is handed out (PeerProtocol
    /// §11.1); the others get `not-offered`, with nothing of them in the answer.
    @Test func aRawFetchGetsOnlyTheActivityOfferedNow() async throws {
        let a = try await DaemonProcess(arguments: ["--name", "ws-a"]).start()
        let b = try await DaemonProcess(arguments: ["--name", "ws-b"]).start()
        defer { Task { await a.stop(); await b.stop() } }
        let ca = HandoffClient(socketPath: a.socketPath)
        try await PairingOnLoopbackTests().pair(ca, b)
        await b.stop()  // its key is the hostile program's now

        let marker = String(UUID().uuidString.prefix(8))
        var earlier = ActivityDraft(activityType: "org.example.earlier")
        earlier.title = "earlier-\(marker)"
        let old = try await ca.becomeCurrent(earlier)
        var other = ActivityDraft(activityType: "org.example.other")
        other.title = "other-\(marker)"
        other.eligibleForHandoff = false  // made, but not offered
        let notOffered = try await ca.becomeCurrent(other)
        var now = ActivityDraft(activityType: "org.example.now")
        now.title = "now-\(marker)"
        let current = try await ca.becomeCurrent(now)

        let port = try await a.peerPort()
        func fetch(_ id: String, title: String) async throws -> [String: Any] {
            let r = try await Self.hostile(b, port: port, ["--case", "fetch", "--activity-id", id, "--title", title])
            #expect(r.status == 0, "\(r)")
            return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
        }
        for (id, title) in [(old.activity.id.rawValue, earlier.title), (notOffered.activity.id.rawValue, other.title),
                            (String(repeating: "ab", count: 16), "never-\(marker)")] {
            let r = try await fetch(id, title: title)
            #expect(r["answered"] as? Int == 1 && r["fetched"] as? String == "not-offered" && r["sawTitle"] as? Bool == false, "\(title): \(r)")
        }
        // The control: the same program gets the current one.
        let got = try await fetch(current.activity.id.rawValue, title: now.title)
        #expect(got["answered"] as? Int == 1 && got["fetched"] is NSNull && got["sawTitle"] as? Bool == true, "\(got)")
        await a.stop()
    }

    /// Runs the hostile program with `member`'s certificate and key against `port`.
    static func hostile(_ member: DaemonProcess, port: Int, _ arguments: [String]) async throws -> CommandResult {
        try await CommandLineTool.run("/usr/bin/python3", [TestEnvironment.packageRoot + "/Tests/Fixtures/hostile-keeper", "127.0.0.1", String(port),
            "--cert", member.stateDirectory + "/device-cert.pem", "--key", member.stateDirectory + "/device-key.pem"] + arguments,
            environment: ProcessInfo.processInfo.environment)
    }

    /// It says in its hello that it takes streams at another member's port (PeerProtocol
    /// §7.1 `listenPort`) and offers an activity with streams. An app on a opens a stream to
    /// it: a dials that port, where c, a trusted member too, answers with its own
    /// certificate. The dial wants the device of the link (§11.3), so the handshake fails:
    /// the app gets an error, and c never hears a stream request.
    @Test func aStreamDialledToAnotherMembersPortIsRefused() async throws {
        let a = try await DaemonProcess(arguments: ["--name", "ws-a"]).start()
        let b = try await DaemonProcess(arguments: ["--name", "ws-b"]).start()
        let c = try await DaemonProcess(arguments: ["--name", "ws-c"]).start()
        let ca = HandoffClient(socketPath: a.socketPath)
        try await PairingOnLoopbackTests().pair(ca, b)
        try await PairingOnLoopbackTests().pair(ca, c)
        await b.stop()
        let (portA, portC) = (try await a.peerPort(), try await c.peerPort())
        let id = String(repeating: "5e", count: 16)
        async let keeper = Self.hostile(b, port: portA, ["--case", "offer-streams", "--activity-id", id, "--listen-port", String(portC), "--hold", "20"])
        try await eventually(timeout: 15, "b's offer to reach a") { try await ca.offers().contains { $0.activity.id.rawValue == id } }
        let streamLinesBefore = c.log().components(separatedBy: "stream").count
        do {
            let got = try await ca.withStream(toActivity: id) { try await $0.reader.read() }
            Issue.record("a stream opened to another member's port: \(String(describing: got))")
        } catch {
            // Named as a knows b (the name it paired with), refused for c's certificate.
            #expect("\(error)".contains("could not open a stream to ws-b") && "\(error)".contains("CERTIFICATE_VERIFY_FAILED"), "\(error)")
        }
        // a did dial c's port (c saw a refuse its certificate), and c heard nothing of a stream.
        try await eventually(timeout: 5, "c to see a's dial refused") { c.log().contains("CERTIFICATE_UNKNOWN") }
        #expect(c.log().components(separatedBy: "stream").count == streamLinesBefore, "\(c.log())")
        #expect(!a.log().contains("continuation stream opened"), "\(a.log())")
        _ = try await keeper
        await a.stop()
        await c.stop()
    }

    /// It offers a `handoff.terminal` whose fields would make ssh or the remote shell do
    /// more (PeerProtocol §9, LocalAPI §24), and hands the activity out as is when fetched.
    /// a's handoffd, continuing it, checks the fields again: `continue` fails naming the
    /// field and prints no command. The same program with plain fields continues (the
    /// control), so the refusals are for what the fields say.
    @Test func aHostileTerminalIsRefusedWhereItIsContinued() async throws {
        let a = try await DaemonProcess(arguments: ["--name", "ws-a"]).start()
        let b = try await DaemonProcess(arguments: ["--name", "ws-b"]).start()
        let ca = HandoffClient(socketPath: a.socketPath)
        try await PairingOnLoopbackTests().pair(ca, b)
        await b.stop()
        let port = try await a.peerPort()
        let handoffctl = try TestEnvironment.binary("handoffctl")
        let pwned = a.directory + "/pwned"
        let plain = ["host=desk.example.org", "directory=/srv/proj", "user=ann", "tmuxSession=work"]
        let cases: [(field: String, info: String)] = [
            ("host", "host=-oProxyCommand=touch \(pwned)"), ("host", "host=desk.example.org;touch \(pwned)"),
            ("directory", "directory=/srv/$(touch \(pwned))"), ("directory", "directory=/srv/../etc"),
            ("directory", "directory=/srv/a\nb"), ("tmuxSession", "tmuxSession=work;touch \(pwned)"),
            ("user", "user=ann$(touch \(pwned))"), ("user", "user=-oProxyCommand=x"), ("port", "port=70000"),
        ]
        for (field, info) in cases + [("", "")] {
            let id = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let fields = (plain + (info.isEmpty ? [] : [info])).flatMap { ["--info", $0] }
            async let keeper = Self.hostile(b, port: port, ["--case", "terminal", "--activity-id", id, "--title", "shell", "--hold", "6"] + fields)
            try await eventually(timeout: 15, "the terminal \(id) to reach a") { try await ca.offers().contains { $0.activity.id.rawValue == id } }
            let r = try await CommandLineTool.run(handoffctl, ["continue"], environment: a.environment)
            if field.isEmpty {
                #expect(r.status == 0 && r.stdout.contains("ssh -t -l ann -- desk.example.org 'tmux new-session -A -s work -c /srv/proj'"), "control: \(r)")
            } else {
                #expect(r.status != 0, "\(info): \(r)")
                #expect(r.stderr.contains("cannot be continued") && r.stderr.contains("userInfo.\(field)"), "\(info): \(r)")
                #expect(!r.stdout.contains("ssh"), "\(info): \(r)")
            }
            let answered = try await keeper
            #expect(answered.stdout.contains("\"answered\": 1"), "\(info): the fetch was answered: \(answered)")
        }
        #expect(!FileManager.default.fileExists(atPath: pwned))
        #expect(try await ca.status().deviceName == "ws-a", "handoffd serves on")
        await a.stop()
    }
}

