import Foundation
import HandoffClient
import HandoffControlAPI
import HandoffCore
import HandoffTestSupport
import Testing

/// Someone on the path records a member's whole session with handoffd (the TLS 1.3
/// handshake with the member's certificate, then a fetch of the current activity) and
/// sends the recording again, byte for byte and in the same pieces, on a new connection
/// (Security.md 3.1). TLS 1.3 makes the server's half of each handshake new: the recorded
/// client records no longer decrypt, so the replay is refused at the handshake: no link, no
/// fetch, nothing of the activity.
@Suite struct ReplayedTrafficTests {
    @Test func aRecordedSessionSentAgainIsRefusedAtTheHandshake() async throws {
        let a = try await DaemonProcess(arguments: ["--name", "ws-a"]).start()
        let b = try await DaemonProcess(arguments: ["--name", "ws-b"]).start()
        let ca = HandoffClient(socketPath: a.socketPath)
        try await PairingOnLoopbackTests().pair(ca, b)
        await b.stop()  // its key records a genuine session below
        let marker = "replayed-\(UUID().uuidString.prefix(8))"
        var draft = ActivityDraft(activityType: "org.example.replay")
        draft.title = marker
        let current = try await ca.becomeCurrent(draft)
        let connectedBefore = a.log().components(separatedBy: "peer connected").count

        let r = try await HostileMemberTests.hostile(b, port: try await a.peerPort(),
            ["--case", "fetch", "--activity-id", current.activity.id.rawValue, "--title", marker, "--hold", "1", "--replay"])
        #expect(r.status == 0, "\(r)")
        let result = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
        // The recording is of a real session: it got the activity.
        #expect(result["fetched"] is NSNull && result["sawTitle"] as? Bool == true, "\(r.stdout)")
        let replay = try #require(result["replay"] as? [String: Any], "\(r.stdout)")
        #expect((replay["pieces"] as? Int ?? 0) >= 2, "the recording has the ClientHello and what followed: \(replay)")
        // handoffd closed it (not the replayer giving up after 10 s of silence).
        #expect(replay["closed"] as? Bool == true && (replay["seconds"] as? Double ?? 99) < 8, "\(replay)")
        // One link came up, the recorded one; the replay ended in the handshake, where the
        // recorded client's records failed to decrypt under the new keys.
        try await eventually(timeout: 5, "a to log the replay's end") { a.log().contains("DECRYPTION_FAILED_OR_BAD_RECORD_MAC") }
        let log = a.log()
        #expect(log.components(separatedBy: "peer connected").count == connectedBefore + 1, "\(log)")
        #expect(try await ca.status().deviceName == "ws-a", "handoffd serves on")
        #expect(try await ca.current()?.activity.title == marker)
        await a.stop()
    }
}
