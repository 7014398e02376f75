import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

/// A stranger on the LAN attacks the peer port (scripts/dev/peer-flood) while the user's own
/// workstations link, continue and stream: the daemon stays up, its memory stays put,
/// and its log says what it refused in a few lines. Root only (CI is root).
extension WorkstationTests {
@Suite struct HostilePeerPortTests {
    static var flood: String { TestEnvironment.packageRoot + "/scripts/dev/peer-flood" }

    /// A whole JSON object (handoffctl --json).
    func json(_ text: String) throws -> [String: Any] {
        guard let o = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw TestFailure("no JSON object in: \(text)")
        }
        return o
    }

    /// The last line that is a JSON object (peer-flood's summary, after anything else in its log).
    func summary(_ text: String) throws -> [String: Any] {
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
              let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw TestFailure("no JSON object in: \(text)") }
        return o
    }

    func log(_ net: NetnsRun, _ host: String) -> String {
        (try? String(contentsOfFile: net.logPath(host), encoding: .utf8)) ?? ""
    }

    func sha256(_ net: NetnsRun, _ host: String, _ path: String) async throws -> String {
        let r = try await net.exec(host, ["sha256sum", path])
        guard r.status == 0, let hash = r.stdout.split(separator: " ").first else { throw TestFailure("sha256sum: \(r)") }
        return String(hash)
    }

    @Test func floodFromAStrangerLeavesTrustedPeersUnharmed() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            let pidA = try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let source = net.directory + "/film.bin"
            let fill = try await net.exec("a", ["/bin/sh", "-c", "head -c 8388608 /dev/urandom > \(source)"])
            #expect(fill.status == 0, "\(fill)")
            let made = try await net.ctl("a", "become-current", "--type", "org.example.video.watch", "--title", "Film",
                                         "--info", "position:=4711", "--stream-file", source)
            #expect(made.status == 0, "\(made)")
            // B goes away, so that it has to link again in the middle of the flood.
            await net.kill("b")
            let rssBefore = NetnsRun.residentBytes(pidA)
            #expect(rssBefore > 0)

            // The stranger: 1,000 junk connections, 50 oversize TLS records and 64 idle
            // connections held open (reopened as they close), for 30 s.
            let address = try await net.address("a"), port = try net.peerPort("a"), attacker = try await net.address("c")
            let floodLog = net.directory + "/flood.log"
            let flooder = try await net.spawn("c", log: floodLog, ["python3", Self.flood, "flood", address, String(port),
                                                                    "--junk", "1000", "--oversize", "50", "--idle", "64", "--hold", "30"])
            defer { net.stop(flooder, SIGKILL) }
            var peak = rssBefore
            func sample() { peak = max(peak, NetnsRun.residentBytes(pidA)) }
            try await eventually(10, "the flood to be refused") {
                sample()
                return log(net, "a").contains("refusing peer connections from \(attacker)")
            }

            // Meanwhile B comes back, links, continues and streams 8 MiB.
            try await net.startDaemon("b")
            let idA = try await net.deviceID("a")
            try await eventually(30, "b to link to a during the flood") {
                sample()
                return try await net.isConnected("b", to: idA)
            }
            try await eventually(10, "a's offer at b") { try await net.ctl("b", "list").stdout.contains("org.example.video.watch") }
            let continued = try await net.ctl("b", "continue", "--json")
            #expect(continued.status == 0, "\(continued)")
            let info = try json(continued.stdout)["userInfo"] as? [String: Any]
            #expect(info?["position"] as? Int == 4711, "\(continued)")
            sample()
            let target = net.directory + "/received.bin"
            let streamed = try await net.ctl("b", "continue", "--stream-to", target)
            #expect(streamed.status == 0, "\(streamed)")
            #expect(try await sha256(net, "b", target) == (try await sha256(net, "a", source)))
            sample()
            #expect(try await net.ctl("a", "status").status == 0)

            // The flood ran its course against a daemon that never went down.
            let status = try await net.wait(flooder, timeout: 60)
            #expect(status == 0, "peer-flood: \((try? String(contentsOfFile: floodLog, encoding: .utf8)) ?? "")")
            sample()
            let summary = try summary(try String(contentsOfFile: floodLog, encoding: .utf8))
            #expect((summary["opened"] as? Int ?? 0) >= 1114, "\(summary)")
            #expect((summary["connected"] as? Int ?? 0) >= 1000, "\(summary)")
            #expect(access("/proc/\(pidA)", F_OK) == 0, "handoffd on a died")
            #expect(!log(net, "a").contains("Fatal error"), "\(log(net, "a"))")
            #expect(try await net.ctl("a", "status").status == 0)
            #expect(peak - rssBefore < 20 << 20, "RSS grew by \((peak - rssBefore) >> 20) MiB")

            // The log says what it refused, in a few lines, not one per connection.
            try await eventually(15, "a summary of the refusals") { log(net, "a").contains("peer connections in the last 10 s") }
            let lines = log(net, "a").split(separator: "\n").filter { $0.contains("refus") && $0.contains("peer connection") }
            #expect(lines.count <= 8, "\(lines.count) lines about refusals:\n\(lines.joined(separator: "\n"))")
            #expect(lines.contains { $0.contains("from \(attacker) (") }, "\(lines)")

            // And B still continues once the flood is over.
            let after = try await net.ctl("b", "continue", "--json")
            #expect(after.status == 0, "\(after)")
        }
    }

    @Test func strangersWithManyAddressesCannotShutOutATrustedPeer() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let source = net.directory + "/doc.bin"
            _ = try await net.exec("a", ["/bin/sh", "-c", "head -c 1048576 /dev/urandom > \(source)"])
            let made = try await net.ctl("a", "become-current", "--type", "org.example.crowded", "--info", "v:=2", "--stream-file", source)
            #expect(made.status == 0, "\(made)")
            await net.kill("b")
            // The stranger holds 80 idle connections from 40 addresses: more than the 32
            // unauthenticated slots in all, never more than 8 from one address.
            let address = try await net.address("a"), port = try net.peerPort("a")
            let prefix = address.split(separator: ".").prefix(3).joined(separator: ".")
            let sources = (0..<40).map { "\(prefix).\(100 + $0)" }
            for s in sources {
                let r = try await net.exec("c", ["ip", "addr", "add", "\(s)/24", "dev", "hnd0"])
                #expect(r.status == 0, "\(r)")
            }
            let floodLog = net.directory + "/flood.log"
            let flooder = try await net.spawn("c", log: floodLog, ["python3", Self.flood, "flood", address, String(port),
                                                                    "--junk", "0", "--oversize", "0", "--idle", "80", "--hold", "25",
                                                                    "--sources", sources.joined(separator: ",")])
            defer { net.stop(flooder, SIGKILL) }
            try await net.startDaemon("b")
            try await eventually(10, "the unauthenticated slots to fill up") {
                log(net, "a").contains("over the cap on unauthenticated connections")
                    || log(net, "a").contains("evicted to make room")
            }
            // B comes back and links (A may dial it: outgoing connections need no slot).
            let idA = try await net.deviceID("a")
            try await eventually(30, "b to link to a while strangers hold every slot") { try await net.isConnected("b", to: idA) }
            let continued = try await net.ctl("b", "continue", "--json")
            #expect(continued.status == 0, "\(continued)")
            #expect((try json(continued.stdout)["userInfo"] as? [String: Any])?["v"] as? Int == 2, "\(continued)")
            // A stream is a connection B dials to A's port: it takes a slot from a busier address.
            let target = net.directory + "/received.bin"
            let streamed = try await net.ctl("b", "continue", "--stream-to", target)
            #expect(streamed.status == 0, "\(streamed)")
            #expect(try await sha256(net, "b", target) == (try await sha256(net, "a", source)))
            let status = try await net.wait(flooder, timeout: 60)
            let text = (try? String(contentsOfFile: floodLog, encoding: .utf8)) ?? ""
            #expect(status == 0, "\(text)")
            #expect((try summary(text)["connected"] as? Int ?? 0) >= 80, "\(text)")
            try await eventually(15, "a summary naming evictions") { log(net, "a").contains("evicted to make room for other addresses") }
        }
    }

    @Test func randomBytesAndDisconnectsAtThePeerPort() async throws {
        let env = ProcessInfo.processInfo.environment
        let seed = env["HANDOFF_FUZZ_SEED"].flatMap(Int.init) ?? 20261123
        let seconds = env["HANDOFF_FUZZ_SECONDS"].flatMap(Double.init) ?? 20
        try await NetnsRun.with(["a", "b", "c"]) { net in
            let pidA = try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            _ = try await net.ctl("a", "become-current", "--type", "org.example.sturdy", "--info", "v:=1")
            let rssBefore = NetnsRun.residentBytes(pidA)
            // A stranger's certificate, and B's own (a trusted peer gone bad: after TLS it
            // sends random frames).
            let stranger = net.directory + "/stranger"
            let made = try await net.exec("c", ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                                                "-nodes", "-keyout", stranger + "-key.pem", "-out", stranger + "-cert.pem",
                                                "-subj", "/CN=stranger", "-days", "2"])
            #expect(made.status == 0, "\(made)")
            let address = try await net.address("a"), port = try net.peerPort("a")
            let fuzzLog = net.directory + "/fuzz.log"
            let fuzzer = try await net.spawn("c", log: fuzzLog, [
                "python3", Self.flood, "fuzz", address, String(port), "--seed", String(seed), "--duration", String(seconds),
                "--concurrency", "16", "--stranger-cert", stranger + "-cert.pem", "--stranger-key", stranger + "-key.pem",
                "--cert", net.stateDirectory("b") + "/device-cert.pem", "--key", net.stateDirectory("b") + "/device-key.pem",
            ])
            defer { net.stop(fuzzer, SIGKILL) }
            var peak = rssBefore
            let status = try await net.wait(fuzzer, timeout: seconds + 60)
            peak = max(peak, NetnsRun.residentBytes(pidA))
            let text = (try? String(contentsOfFile: fuzzLog, encoding: .utf8)) ?? ""
            #expect(status == 0, "seed \(seed): peer-flood fuzz: \(text)")
            let summary = try summary(text)
            #expect((summary["sessions"] as? Int ?? 0) >= 200, "seed \(seed): \(summary)")
            #expect((summary["tls_handshakes"] as? Int ?? 0) > 0, "seed \(seed): \(summary)")
            // Survived: same process, still answering, no crash in its log, memory bounded.
            #expect(access("/proc/\(pidA)", F_OK) == 0, "seed \(seed): handoffd on a died")
            #expect(!log(net, "a").contains("Fatal error"), "seed \(seed)")
            #expect(try await net.ctl("a", "status").status == 0)
            #expect(peak - rssBefore < 20 << 20, "seed \(seed): RSS grew by \((peak - rssBefore) >> 20) MiB")
            // The trusted peer's link (displaced by the fuzzer's use of its certificate) comes back.
            let idA = try await net.deviceID("a")
            try await eventually(40, "b to link to a again") { try await net.isConnected("b", to: idA) }
            try await eventually(10, "a's offer at b") { try await net.ctl("b", "list").stdout.contains("org.example.sturdy") }
            let continued = try await net.ctl("b", "continue", "--json")
            #expect(continued.status == 0, "seed \(seed): \(continued)")
            #expect((try json(continued.stdout)["userInfo"] as? [String: Any])?["v"] as? Int == 1, "seed \(seed): \(continued)")
        }
    }
}
}
