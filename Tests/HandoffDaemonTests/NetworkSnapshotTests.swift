@testable import HandoffDaemon
import HandoffAvahi
import Testing

/// When the network counts as changed, from the kernel's own tables (as read from /proc).
@Suite("Network snapshot")
struct NetworkSnapshotTests {
    let ipv4 = """
        Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
        wlan0\t00000000\t0100A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0
        wlan0\t0000A8C0\t00000000\t0001\t0\t0\t600\t00FFFFFF\t0\t0\t0
        """
    let ipv6 = """
        fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     wlan0
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000002 0000001a 00000003     wlan0
        """

    @Test func routesAreReadWithoutTheirCounters() {
        let routes = NetworkSnapshot.ipv4Routes(ipv4)
        #expect(routes.count == 2)
        #expect(routes.contains("4 wlan0 00000000 0100A8C0 600 00000000"), "\(routes)")
        // Use and reference counts change all the time; they are not a network change.
        let busier = ipv4.replacingOccurrences(of: "0003\t0\t0\t600", with: "0003\t7\t912\t600")
        #expect(NetworkSnapshot.ipv4Routes(busier) == routes)
        let six = NetworkSnapshot.ipv6Routes(ipv6)
        #expect(six.count == 2)
        let busier6 = ipv6.replacingOccurrences(of: "00000002 0000001a", with: "00000009 000003ff")
        #expect(NetworkSnapshot.ipv6Routes(busier6) == six)
    }

    @Test func aNewAddressOrRouteIsAChangeAndNothingElseIs() {
        let lan = HostAddress(interfaceIndex: 2, address: "192.168.0.7")
        let linkLocal = HostAddress(interfaceIndex: 2, address: "fe80::1")
        let base = NetworkSnapshot(addresses: [lan, linkLocal], routes: NetworkSnapshot.ipv4Routes(ipv4))
        #expect(base.change(from: base) == nil, "a lifetime refresh changes nothing")

        var moved = base
        moved.addresses = [HostAddress(interfaceIndex: 3, address: "10.0.0.9"), linkLocal]
        #expect(moved.change(from: base) == .init(addresses: true, routes: false))

        var rerouted = base
        rerouted.routes = NetworkSnapshot.ipv4Routes(ipv4.replacingOccurrences(of: "0100A8C0", with: "FE00A8C0"))
        #expect(rerouted.change(from: base) == .init(addresses: false, routes: true))
        // An address that went to another interface is a change too.
        var elsewhere = base
        elsewhere.addresses = [HostAddress(interfaceIndex: 4, address: "192.168.0.7"), linkLocal]
        #expect(elsewhere.change(from: base)?.addresses == true)
    }

    @Test func theSnapshotOfThisMachineHasNoLoopback() {
        let s = NetworkWatch.snapshot()
        #expect(!s.addresses.contains { $0.address == "127.0.0.1" || $0.address == "::1" })
        #expect(s.addresses.allSatisfy { !$0.address.contains("%") && $0.interfaceIndex > 0 })
    }
}
