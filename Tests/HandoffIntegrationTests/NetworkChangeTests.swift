import Foundation
import HandoffTestSupport
import Testing

/// A network change as a workstation meets it (a new address: another Wi-Fi, a VPN):
/// the advertisement is renewed at once with the new address, and peers that are not
/// linked are dialled at once instead of when their backoff says. Root only.
extension WorkstationTests {
@Suite struct NetworkChangeTests {
    /// a's avahi publishes no host address records of its own (`publish-addresses=no`, the
    /// setting Docs/PeerProtocol.md §3.1 recommends): handoff's own records still let b link,
    /// and when a gains an address, c sees a new instance with that address within seconds,
    /// and its capture holds no host name.
    @Test func aNewAddressRenewsTheAdvertisement() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            try await net.setAvahi("a", "publish-addresses", "no")
            for h in ["a", "b"] { try await net.startDaemon(h) }
            try await net.pairByCode("a", "b")
            let idA = try await net.deviceID("a")
            try await eventually(20, "a and b to link") { try await net.isConnected("b", to: idA) }
            let addressA = try await net.address("a")
            func seen() async throws -> [String] {
                let browse = try await net.exec("c", ["timeout", "-k", "2", "4", "avahi-browse", "-rtp", "_handoff._tcp"])
                return browse.stdout.split(separator: "\n").filter { $0.hasPrefix("=;") && $0.contains(";IPv4;") }.map(String.init)
            }
            var before: [String] = []
            try await eventually(15, "c to see a") {
                before = try await seen().filter { $0.contains(";\(addressA);") }
                return !before.isEmpty
            }
            let nameBefore = before[0].split(separator: ";")[3]

            let pcap = net.directory + "/c.pcap"
            let tshark = try await net.captureMDNS(on: "c", seconds: 12, to: pcap)
            let newAddress = addressA.split(separator: ".").dropLast().joined(separator: ".") + ".200"
            let add = try await net.exec("a", ["ip", "addr", "add", "\(newAddress)/24", "dev", "hnd0"])
            #expect(add.status == 0, "\(add)")
            let changed = Date()
            var after: [String] = []
            try await eventually(8, "c to see a under a new name with its new address") {
                after = try await seen().filter { $0.contains(";\(newAddress);") }
                return after.contains { $0.split(separator: ";")[3] != nameBefore }
            }
            #expect(Date().timeIntervalSince(changed) < 6.5, "renewed at once, not at the next rotation")
            #expect(try await net.isConnected("b", to: idA), "the link is not disturbed")
            #expect(try await net.wait(tshark, timeout: 30) == 0)
            let raw = try Data(contentsOf: URL(fileURLWithPath: pcap))
            #expect(raw.range(of: Data("\(net.name)-a".utf8)) == nil, "with publish-addresses=no nothing names a's host")
        }
    }

    /// b is a static peer of a that is down: a's retries back off (16 s after five
    /// failures). b comes back but cannot announce itself (no mDNS); a's network changes,
    /// and a dials b at once.
    @Test func aNetworkChangeRedialsAtOnce() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("b", ["--peer-port", "7443"])
            try await net.startDaemon("a")
            try await net.pairByCode("a", "b")
            let idB = try await net.deviceID("b")
            let addressB = try await net.address("b")
            await net.kill("b")
            await net.kill("a")
            // (The log goes on from a's first run: count from here.)
            let before = ((try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? "").utf8.count
            try await net.startDaemon("a", ["--peer", "\(addressB):7443"])
            func failures() -> Int {
                let log = (try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? ""
                return String(decoding: log.utf8.dropFirst(before), as: UTF8.self).split(separator: "\n")
                    .filter { $0.contains("dial failed") && $0.contains(addressB) }.count
            }
            try await eventually(40, "a to fail five times (next try in 16 s)") { failures() >= 5 }
            let failed = failures()
            try await net.startDaemon("b", ["--peer-port", "7443", "--no-discovery"])
            // b's log goes on from its first run too: its second listener.
            try await eventually(10, "b's peer listener to be ready again") {
                ((try? String(contentsOfFile: net.logPath("b"), encoding: .utf8)) ?? "")
                    .components(separatedBy: "peer listener ready").count - 1 >= 2
            }
            // b can be dialled now, and nothing may link them before a's network changes
            // (a's next try is 16 s away); a dial at b's start would link well within 0.5 s.
            try await never(within: 0.5, because: "a linked with b before its backoff ended or its network changed") { try await net.isConnected("a", to: idB) }
            let addressA = try await net.address("a")
            let newAddress = addressA.split(separator: ".").dropLast().joined(separator: ".") + ".201"
            _ = try await net.exec("a", ["ip", "addr", "add", "\(newAddress)/24", "dev", "hnd0"])
            try await eventually(4, "a to dial b at once") { try await net.isConnected("a", to: idB) }
            #expect(failures() == failed, "linked by the redial after the change, not by a retry")
        }
    }
}
}
