import Foundation
import Testing

/// Continuing from a workstation that has gone to sleep (PeerProtocol.md §18), the way a
/// user meets it: a's offer is saved and handed on when logind (a stand-in on a's system
/// bus) announces sleep; a is then frozen and unreachable; b, whose link was down, comes
/// back, finds a's offer kept by c, and continues it. Root only.
extension WorkstationTests {
@Suite struct KeptOffersTests {
    /// HOST's port on the run's bridge (hosts are p1, p2, … in the order given).
    func bridgePort(_ net: NetnsRun, _ port: String, up: Bool) async throws {
        let r = try await CommandLineTool.run("/usr/sbin/ip", ["-n", "hnd-\(net.name)-br", "link", "set", port, up ? "up" : "down"],
                                              environment: net.environment)
        #expect(r.status == 0, "\(r)")
    }

    func offers(_ net: NetnsRun, _ host: String) async throws -> [[String: Any]] {
        let r = try await net.exec(host, ["curl", "-s", "--unix-socket", net.socket(host), "http://localhost/v1/offers"])
        return (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["offers"] as? [[String: Any]] ?? []
    }

    func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    @Test func anOfferSavedBeforeSleepIsContinuedFromAnotherMember() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            for h in ["a", "b", "c"] { _ = try await net.startDaemon(h, ["--will-save-timeout-ms", "2000"]) }
            let idA = try await net.deviceID("a"), idB = try await net.deviceID("b"), idC = try await net.deviceID("c")
            try await net.pairByCode("a", "b")
            try await net.pairByCode("b", "c")
            try await eventually(30, "a to link with c through the account") { try await net.isConnected("a", to: idC) }

            // a's graphical session: logind (a stand-in), then the agent, which takes the lock.
            let logind = net.directory + "/a-logind.log"
            let standin = try await net.spawn("a", log: logind, [TestEnvironment.packageRoot + "/Tests/Fixtures/logind-standin"])
            try await eventually(10, "the logind stand-in on a") { self.text(logind).contains("ready") }
            let desktop = try DesktopSession(net, host: "a")
            try await desktop.startBus()
            try await desktop.startAgent()
            try await eventually(10, "a's agent to take the delay lock") { self.text(logind).contains("inhibit sleep delay by handoff") }
            try await eventually(10, "a's doctor to say sleep is guarded") {
                try await net.ctl("a", "doctor", "--json").stdout.contains("the session agent holds logind's delay lock")
            }

            // b wanders off; a's app makes its activity current, with a payload it refreshes on will-save.
            try await bridgePort(net, "p2", up: false)
            try await eventually(15, "a and c to notice b is gone") {
                let a = try await net.isConnected("a", to: idB), c = try await net.isConnected("c", to: idB)
                return !a && !c
            }
            let owner = try await net.spawn("a", log: net.directory + "/a-owner.log", [
                try TestEnvironment.binary("handoffctl"), "--socket", net.socket("a"), "become-current", "--attach", "--needs-save",
                "--type", "org.example.player", "--title", "Big Buck Bunny", "--info", "position:=1", "--streams",
                "--refresh-with", "echo '{\"position\": 42}'",
            ])
            var offered: String?
            try await eventually(10, "c to see a's offer") {
                offered = try await self.offers(net, "c").first { ($0["device"] as? [String: Any])?["id"] as? String == idA }
                    .flatMap { ($0["activity"] as? [String: Any])?["id"] as? String }
                return offered != nil
            }

            // Sleep: the lock is given back once the offer, saved by its app, went to c.
            net.stop(standin, SIGUSR1)
            do {
                try await eventually(10, "a to let the machine sleep") { self.text(logind).contains("asleep after") }
            } catch {
                throw TestFailure("\(error)\n--- logind stand-in ---\n\(text(logind))\n--- a's agent ---\n\(desktop.log)")
            }
            let slept = text(logind)
            #expect(slept.contains("every lock given back"), "the agent gave the lock back, not the delay running out:\n\(slept)")
            #expect(text(desktop.agentLog).contains("going to sleep"), "\(desktop.log)")
            // Frozen and off the network, as a closed lid is.
            try await bridgePort(net, "p1", up: false)
            let daemonA = try #require(net.daemons["a"])
            net.stop(daemonA, SIGSTOP)
            try await eventually(5, "c to show a's offer as kept") {
                try await self.offers(net, "c").contains { $0["kept"] as? Bool == true && ($0["activity"] as? [String: Any])?["id"] as? String == offered }
            }

            // b comes back: it links with c only, and finds a's offer there.
            try await bridgePort(net, "p2", up: true)
            try await eventually(30, "b to link with c again") { try await net.isConnected("b", to: idC) }
            try await eventually(5, "b to list a's kept offer") {
                try await self.offers(net, "b").contains { $0["kept"] as? Bool == true && ($0["activity"] as? [String: Any])?["id"] as? String == offered }
            }
            let continued = try await net.ctl("b", "continue", "--json")
            #expect(continued.status == 0, "\(continued)")
            let o = try JSONSerialization.jsonObject(with: Data(continued.stdout.utf8)) as? [String: Any] ?? [:]
            #expect(o["id"] as? String == offered, "\(o)")
            #expect((o["userInfo"] as? [String: Any])?["position"] as? Int == 42, "the payload a's app saved before sleep: \(o)")
            #expect(o["stale"] as? Bool == false, "\(o)")
            #expect((o["device"] as? [String: Any])?["name"] as? String == "ws-a", "\(o)")
            // Its streams need a: said plainly.
            let stream = try await net.ctl("b", "continue", "--stream-to", "/dev/null")
            #expect(stream.status != 0 && stream.stderr.contains("wake it"), "\(stream)")

            // a wakes: it links again at once, and its offer is one offer everywhere.
            net.stop(daemonA, SIGCONT)
            try await bridgePort(net, "p1", up: true)
            net.stop(standin, SIGUSR2)
            try await eventually(20, "a and b to link again") { try await net.isConnected("b", to: idA) }
            for h in ["b", "c"] {
                try await eventually(5, "\(h) to list a's offer once, live") {
                    let fromA = try await self.offers(net, h).filter { ($0["device"] as? [String: Any])?["id"] as? String == idA }
                    return fromA.count == 1 && fromA[0]["kept"] == nil
                }
            }
            net.stop(owner, SIGTERM)
            desktop.stop()
            net.stop(standin, SIGTERM)
        }
    }
}
}
