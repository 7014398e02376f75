import Foundation
import HandoffTestSupport
import Testing

/// Beyond one subnet: a's run and far's run are two bridges joined by a router namespace,
/// which forwards unicast and no multicast, so mDNS cannot help. They pair by code with
/// `--address`, a dials far as a static peer (`--peer HOST:PORT`), and a's activity is
/// continued on far. Root only.
extension WorkstationTests {
@Suite struct StaticPeerTests {
    @Test func aStaticPeerOnAnotherSubnetLinksAndContinues() async throws {
        try await NetnsRun.with(["far"]) { farNet in
            try await NetnsRun.with(["a"]) { net in
                let route = try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "route", net.name, farNet.name], environment: net.environment)
                #expect(route.status == 0, "\(route)")
                let farAddress = try await farNet.address("far")
                try await farNet.startDaemon("far", ["--peer-port", "7443"])
                try await net.startDaemon("a", ["--peer", "\(farAddress):7443"])
                // No multicast crosses the router: far is not discovered. Both advertise (each
                // logged it once avahi-daemon announced its service): far's announcements are out.
                for (run, host) in [(farNet, "far"), (net, "a")] {
                    try await eventually(20, "\(host) to advertise") {
                        ((try? String(contentsOfFile: run.logPath(host), encoding: .utf8)) ?? "").contains(">advertised ")
                    }
                }
                #expect(try await !net.ctl("a", "peers").stdout.contains("ws-far"), "mDNS must not cross the router")
                // Pairing by address, across the router.
                let ctl = try TestEnvironment.binary("handoffctl")
                let pf = try await farNet.spawn("far", log: farNet.directory + "/pair.log", [ctl, "pair"])
                let pa = try await net.spawn("a", log: net.directory + "/pair.log", [ctl, "pair", "--address", "\(farAddress):7443"])
                func read(_ p: String) -> String { (try? String(contentsOfFile: p, encoding: .utf8)) ?? "" }
                var code: String?
                try await eventually(20, "both to show a code") {
                    code = NetnsRun.pairingCode(in: read(net.directory + "/pair.log"))
                    return code != nil && NetnsRun.pairingCode(in: read(farNet.directory + "/pair.log")) == code
                }
                let shown = code!
                async let ca = net.ctl("a", "pair", "--code", shown)
                async let cf = farNet.ctl("far", "pair", "--code", shown)
                let (ra, rf) = try await (ca, cf)
                #expect(ra.status == 0 && rf.status == 0, "\(ra)\n\(rf)")
                _ = try await net.wait(pa, timeout: 10)
                _ = try await farNet.wait(pf, timeout: 10)
                // a dials far at its configured address; they link and continue.
                let idFar = try await farNet.deviceID("far")
                try await eventually(15, "a to link with far") { try await net.isConnected("a", to: idFar) }
                _ = try await net.ctl("a", "become-current", "--type", "org.example.remote", "--title", "Across the router")
                try await eventually(10, "the offer to reach far") { try await farNet.ctl("far", "list").stdout.contains("Across the router") }
                let continued = try await farNet.ctl("far", "continue", "--print")
                #expect(continued.status == 0 && continued.stdout.contains("org.example.remote"), "\(continued)")
            }
        }
    }
}
}
