import Foundation
import HandoffTestSupport
import Testing

/// Unicast DNS-SD across a router: a's run and far's are two bridges joined by a router
/// namespace (no multicast across), and a DNS server on the router (dnsmasq) holds
/// `_handoff._tcp` records for far in the domain `handoff.test`, as an administrator
/// would keep them. a browses that domain (`--dns-sd-domain`) through its avahi-daemon's
/// wide-area support, finds far, dials it, and they link and continue. Root only.
extension WorkstationTests {
@Suite struct WideAreaDiscoveryTests {
    @Test func aPeerListedInUnicastDNSSDLinksAndContinues() async throws {
        try await NetnsRun.with(["far"]) { farNet in
            try await NetnsRun.with(["a"]) { net in
                let route = try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "route", net.name, farNet.name], environment: net.environment)
                #expect(route.status == 0, "\(route)")
                let farAddress = try await farNet.address("far")
                let router = try await net.address("a").split(separator: ".").dropLast().joined(separator: ".") + ".254"
                let zone = """
                    port=53
                    listen-address=\(router)
                    bind-interfaces
                    no-resolv
                    no-hosts
                    ptr-record=_handoff._tcp.handoff.test,office._handoff._tcp.handoff.test
                    srv-host=office._handoff._tcp.handoff.test,far.handoff.test,7443
                    txt-record=office._handoff._tcp.handoff.test,"v=1"
                    host-record=far.handoff.test,\(farAddress)
                    """
                let conf = net.directory + "/dnsmasq.conf"
                try zone.write(toFile: conf, atomically: true, encoding: .utf8)
                let dns = try await CommandLineTool.run("/usr/sbin/ip", ["netns", "exec", "hnd-\(net.name)-rtr", "/usr/sbin/dnsmasq",
                                                                          "--conf-file=\(conf)", "--pid-file=\(net.directory)/dnsmasq.pid"],
                                                        environment: net.environment)
                #expect(dns.status == 0, "\(dns)")
                let resolver = try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "dns", net.name, "a", router], environment: net.environment)
                #expect(resolver.status == 0, "\(resolver)")

                try await farNet.startDaemon("far", ["--peer-port", "7443"])
                try await net.startDaemon("a", ["--dns-sd-domain", "handoff.test"])
                // Trust by ID (pairing by address would make far a static peer of a, which
                // is not what this tests).
                let idA = try await net.deviceID("a"), idFar = try await farNet.deviceID("far")
                #expect(try await net.ctl("a", "trust", idFar).status == 0)
                #expect(try await farNet.ctl("far", "trust", idA).status == 0)
                try await eventually(20, "a to find far in handoff.test and link") { try await net.isConnected("a", to: idFar) }
                let log = (try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? ""
                #expect(!log.contains("static peer"), "no static peer was configured")

                _ = try await net.ctl("a", "become-current", "--type", "org.example.remote", "--title", "Through DNS-SD")
                try await eventually(10, "the offer to reach far") { try await farNet.ctl("far", "list").stdout.contains("Through DNS-SD") }
                let continued = try await farNet.ctl("far", "continue", "--print")
                #expect(continued.status == 0 && continued.stdout.contains("org.example.remote"), "\(continued)")
            }
        }
    }
}
}
