import Foundation
import HandoffClient
import HandoffControlAPI
import HandoffCore
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
            let r = try await CommandLineTool.run("/usr/bin/python3", [TestEnvironment.packageRoot + "/Tests/Fixtures/hostile-keeper", "127.0.0.1", String(port),
                "--cert", b.stateDirectory + "/device-cert.pem", "--key", b.stateDirectory + "/device-key.pem",
                "--case", "fetch", "--activity-id", id, "--title", title], environment: a.environment)
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
}
