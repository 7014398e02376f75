@testable import HandoffDaemon
import Testing

/// handoffd.conf settings that take more than a number: what is accepted and what is refused.
@Suite("Daemon configuration")
struct DaemonConfigurationTests {
    @Test func unicastDNSSDDomainsAreDomainNames() throws {
        var c = DaemonConfiguration()
        try c.apply(configFile: "dns-sd-domain = corp.example\ndns-sd-domain = Lab.Corp.Example.\ndns-sd-domain = corp.example\n", path: "t")
        #expect(c.dnsSDDomains == ["corp.example", "Lab.Corp.Example"], "a trailing dot is dropped and repeats are ignored")
        for bad in ["local", "LOCAL.", "", "a..b", "-x.example", "x y.example", "x/y", String(repeating: "a", count: 64) + ".example"] {
            var d = DaemonConfiguration()
            #expect(throws: DaemonConfiguration.FileError.self, "\(bad)") { try d.set("dns-sd-domain", bad) }
        }
    }

    @Test func staticPeersNeedAPort() throws {
        var c = DaemonConfiguration()
        try c.set("peer", "desk.example:7443")
        try c.set("peer", "[fd00::2]:7443")
        #expect(c.staticPeers == ["desk.example:7443", "[fd00::2]:7443"])
        #expect(throws: DaemonConfiguration.FileError.self) { try c.set("peer", "desk.example") }
    }

    @Test func crlfLineEndsAreLineEnds() throws {
        var c = DaemonConfiguration()
        try c.apply(configFile: "name = desk\r\ndns-sd-domain = corp.example\r\n", path: "t")
        #expect(c.deviceName == "desk" && c.dnsSDDomains == ["corp.example"])
    }
}
