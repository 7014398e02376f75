import Foundation
import HandoffTestSupport
import Testing

/// `handoffctl doctor` as a user meets it: on a healthy namespace workstation, then with
/// each thing broken in turn (a firewall rule dropping mDNS, the peer down, avahi-daemon
/// stopped), the right finding with its fix, and exit 1. Root only.
extension WorkstationTests {
@Suite struct DoctorTests {
    func checks(_ net: NetnsRun, _ host: String) async throws -> (status: Int32, byID: [String: [String: Any]]) {
        let r = try await net.ctl(host, "doctor", "--json")
        let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let list = o?["checks"] as? [[String: Any]] ?? []
        return (r.status, Dictionary(list.map { ($0["id"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a }))
    }

    @Test func doctorFindsWhatIsBrokenAndSaysHowToFixIt() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let idB = try await net.deviceID("b")

            var (status, found) = try await checks(net, "a")
            #expect(status == 0, "healthy: nothing failed: \(found)")
            for id in ["daemon", "socket", "discovery", "firewall", "identity", "trust", "state-files", "interface.hnd0", "peer.\(idB)", "clock.\(idB)"] {
                #expect(found[id]?["status"] as? String == "ok", "\(id): \(found[id] ?? [:])")
            }
            #expect(found["units"]?["status"] as? String == "warning", "no units are installed in a namespace host")
            let human = try await net.ctl("a", "doctor")
            #expect(human.stdout.contains("ok       Workstation ws-b: connected"), "\(human)")

            // A firewall rule that drops mDNS.
            for cmd in [["nft", "add", "table", "inet", "hf"], ["nft", "add", "chain", "inet", "hf", "input", "{ type filter hook input priority 0; }"],
                        ["nft", "add", "rule", "inet", "hf", "input", "udp", "dport", "5353", "drop"]] {
                let r = try await net.exec("a", cmd)
                #expect(r.status == 0, "\(cmd): \(r)")
            }
            (status, found) = try await checks(net, "a")
            #expect(status == 1)
            #expect(found["firewall"]?["status"] as? String == "failed" && (found["firewall"]?["detail"] as? String ?? "").contains("5353"), "\(found["firewall"] ?? [:])")
            #expect((found["firewall"]?["fix"] as? String ?? "").contains("udp dport 5353 accept"))
            _ = try await net.exec("a", ["nft", "delete", "table", "inet", "hf"])

            // The peer goes away.
            await net.kill("b")
            try await eventually(15, "a to notice b is gone") {
                let (_, f) = try await checks(net, "a")
                return f["peer.\(idB)"]?["status"] as? String == "failed"
            }
            (status, found) = try await checks(net, "a")
            #expect(status == 1)
            let peer = found["peer.\(idB)"] ?? [:]
            #expect((peer["detail"] as? String ?? "").contains("not"), "\(peer)")
            #expect(peer["fix"] as? String != nil)

            // avahi-daemon stops.
            _ = try await net.exec("a", ["sh", "-c", "kill $(cat /run/avahi-daemon/pid)"])
            try await eventually(10, "a to see avahi gone") {
                let (_, f) = try await checks(net, "a")
                return f["discovery"]?["status"] as? String == "failed"
            }
            (_, found) = try await checks(net, "a")
            #expect((found["discovery"]?["detail"] as? String ?? "").contains("avahi-daemon is not running"), "\(found["discovery"] ?? [:])")
            #expect((found["discovery"]?["fix"] as? String ?? "").contains("avahi-daemon"))

            // And handoffd itself stopped: said first, with how to start it.
            await net.kill("a")
            let down = try await net.ctl("a", "doctor")
            #expect(down.status == 1 && down.stdout.contains("FAILED   handoffd: not running"), "\(down)")
            #expect(down.stdout.contains("systemctl --user start handoffd"))
        }
    }
}
}

/// The doctor on one workstation, as any user: a trusted-devices file that cannot be read
/// is kept aside, and the doctor says so and how to recover.
@Suite struct DoctorLocalTests {
    @Test func anUnreadableTrustFileIsFoundAndKeptAside() async throws {
        let daemon = try DaemonProcess()
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
        try "{\"devices\": [ oops".write(toFile: daemon.stateDirectory + "/trusted-devices.json", atomically: true, encoding: .utf8)
        try await daemon.start()
        let r = try await CommandLineTool.handoffctl(["doctor", "--json"], daemon: daemon)
        #expect(r.status == 1, "a failed check: \(r)")
        let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let checks = Dictionary(((o?["checks"] as? [[String: Any]]) ?? []).map { ($0["id"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(checks["trust"]?["status"] as? String == "failed", "\(checks["trust"] ?? [:])")
        #expect((checks["trust"]?["detail"] as? String ?? "").contains("kept as"))
        #expect(checks["state-files"]?["status"] as? String == "warning")
        #expect(checks["identity"]?["status"] as? String == "ok", "\(checks["identity"] ?? [:])")
        let kept = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory).filter { $0.hasPrefix("trusted-devices.json.unreadable-") }
        #expect(kept.count == 1, "kept aside, not overwritten")
    }
}
