import Foundation
import HandoffClient
import HandoffCore
import HandoffTestSupport
import Testing

/// Hostile TLS at the peer port (issue 30): a TLS 1.2 client, one without a certificate,
/// a stranger's, an expired one, one whose key usage is for signing certificates, one with
/// a chain of 300 intermediates, a connection that says nothing and one that stops inside
/// its ClientHello. Each is refused: at the handshake with an alert, or closed by the
/// pre-hello deadline (handshake 3 s + hello 2 s); the client never gets a byte of
/// application data, and what it saw of the server is the certificate every TLS client sees
/// (PeerProtocol §13), whose subject names no one. handoffd serves on meanwhile.
@Suite struct PeerTLSRefusalTests {
    static var probe: String { TestEnvironment.packageRoot + "/Tests/Fixtures/tls-probe" }

    @Test(arguments: ["tls12", "nocert", "stranger", "expired", "wrongusage", "hugechain", "stall", "partial"])
    func aHostileHandshakeIsRefusedAndLearnsNothing(_ mode: String) async throws {
        let daemon = try await DaemonProcess(arguments: ["--name", "Ann's desk"]).start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        _ = try await client.becomeCurrent(ActivityDraft(activityType: "org.example.secret"))
        let port = try Self.peerPort(daemon)
        let r = try await CommandLineTool.run("/usr/bin/python3", [Self.probe, "127.0.0.1", String(port), mode], environment: ["PATH": "/usr/bin:/bin"])
        #expect(r.status == 0, "\(r)")
        let result = try JSONValue(parsing: Array(r.stdout.utf8)).objectValue ?? [:]
        #expect(result["applicationBytes"] == .integer(0), "\(mode): \(r.stdout)")
        // Whatever the client could read of the server names neither the device nor the user.
        // In TLS 1.3 the server shows its certificate before it judges the client's, so a
        // probe whose handshake got that far read it; a TLS 1.2 hello is refused, and the
        // huge chain may be refused before the probe's side is done.
        if ["nocert", "stranger", "expired", "wrongusage"].contains(mode) {
            #expect(result["handshake"] == .bool(true) && result["serverSubject"]?.stringValue == "CN=handoff device", "\(mode): \(r.stdout)")
        } else if let subject = result["serverSubject"]?.stringValue {
            #expect(subject == "CN=handoff device", "\(subject)")
        }
        #expect(!r.stdout.contains("Ann") && !r.stdout.contains("secret"), "\(r.stdout)")
        let seconds: Double = switch result["seconds"] {
        case .double(let d)?: d
        case .integer(let i)?: Double(i)
        default: 99
        }
        switch mode {
        case "stall", "partial":
            // Closed by handoffd, not by the probe giving up at 30 s.
            #expect(seconds < 10, "\(mode): open for \(seconds) s")
            #expect(result["handshake"] == .bool(false))
        default:
            // A TLS alert, at once, and a line in the log (a silent connection is closed
            // without one: a flood of them must not fill the journal). The huge chain is
            // refused at its first record, its message's length, while the probe is still
            // sending the rest: when the rest has not all arrived by then, handoffd closes
            // over unread bytes, TCP answers them with a reset, and the reset can reach the
            // probe before it reads the alert. Both are a refusal at once.
            let error = result["error"]?.stringValue ?? ""
            let refused = error.contains("alert") || (mode == "hugechain" && (error.contains("reset by peer") || error.contains("Broken pipe")))
            #expect(refused, "\(mode): \(r.stdout)")
            #expect(seconds < 10, "\(mode): refused after \(seconds) s")
            // handoffd logs the end after the probe has seen it.
            try await eventually("the refusal in handoffd's log") { daemon.log().contains("peer connection ended") }
        }
        #expect(try await client.status().deviceName == "Ann's desk", "handoffd serves on")
    }

    static func peerPort(_ daemon: DaemonProcess) throws -> Int {
        guard let line = daemon.log().split(separator: "\n").last(where: { $0.contains("peer listener ready") }),
              let part = line.split(separator: " ").first(where: { $0.hasPrefix("port=") }), let port = Int(part.dropFirst(5)) else {
            throw TestFailure("no peer port in handoffd's log")
        }
        return port
    }
}
