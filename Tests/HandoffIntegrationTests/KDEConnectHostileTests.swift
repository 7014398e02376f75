import Foundation
import HandoffControlAPI
import HandoffCore
import HandoffTestSupport
import Testing

/// An attacker on the LAN against handoff's KDE Connect endpoint, at scale
/// (Tests/Fixtures/kdeconnect-hostile on host h): KDE Connect's own CVEs replayed. The
/// endpoint on a holds its limits (Docs/KDEConnect.md), and handoffd, its account with b
/// and a's activity are untouched. Root only.
extension WorkstationTests {
@Suite struct KDEConnectHostileTests {
    static var fixture: String { TestEnvironment.packageRoot + "/Tests/Fixtures/kdeconnect-hostile" }

    func run(_ net: NetnsRun, _ args: [String]) async throws -> [String: Any] {
        let r = try await net.exec("h", ["/usr/bin/python3", Self.fixture] + args)
        guard r.status == 0, let line = r.stdout.split(separator: "\n").last,
              let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw TestFailure("kdeconnect-hostile \(args.joined(separator: " ")): \(r)")
        }
        return o
    }

    func endpointPID(_ net: NetnsRun) async throws -> Int32 {
        let r = try await net.exec("a", ["pgrep", "-f", "^handoff-kdeconnect "])
        guard let pid = r.stdout.split(separator: "\n").first.flatMap({ Int32($0) }) else { throw TestFailure("no handoff-kdeconnect: \(r)") }
        return pid
    }

    @Test func theEndpointHoldsItsLimitsAndHandoffIsUntouched() async throws {
        try await NetnsRun.with(["a", "b", "h"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            #expect(try await net.ctl("a", "kdeconnect", "on").status == 0)
            let url = "https://example.org/still-here-\(UInt32.random(in: 0...UInt32.max))"
            #expect(try await net.ctl("a", "become-current", "--type", "test.page", "--webpage-url", url).status == 0)
            let address = try await net.address("a")
            let endpoint = try await endpointPID(net)
            let handoffd = try #require(net.daemons["a"])
            try await Task.sleep(nanoseconds: 500_000_000)
            let baseline = NetnsRun.residentBytes(endpoint)

            // 1,000 UDP identities of made-up devices, all pointing at a tarpit: at most 42
            // dials at once (CVE-2020-26164: kdeconnectd dialled them all).
            let tarpit = try await net.spawn("h", log: "\(net.directory)/tarpit.log", ["/usr/bin/python3", Self.fixture, "tarpit", "1740", "14"])
            try await Task.sleep(nanoseconds: 500_000_000)
            let flood = try await run(net, ["udp-flood", address, "1000", "1740"])
            #expect(flood["sent"] as? Int == 1000)
            _ = try await net.wait(tarpit, timeout: 20)
            let held = try JSONSerialization.jsonObject(with: Data((try String(contentsOfFile: "\(net.directory)/tarpit.log", encoding: .utf8))
                .split(separator: "\n").last.map { Data($0.utf8) } ?? Data())) as? [String: Any] ?? [:]
            let most = try #require(held["most"] as? Int)
            #expect(most >= 1 && most <= KDEConnectLimitsForTests.pending, "dials held at once: \(held)")

            // 1,000 connections that say nothing: all closed, none later than the 1 s deadline
            // (and those over the 42 waiting at once, at once).
            let silent = try await run(net, ["silent", address, "1000"])
            let connected = try #require(silent["connected"] as? Int)
            #expect(connected > 0 && silent["closed"] as? Int == connected, "\(silent)")
            #expect((silent["latest"] as? Double ?? 99) < 2.5, "\(silent)")

            // Identities over 8 KiB, with and without their newline: closed.
            let oversize = try await run(net, ["oversize", address])
            #expect(oversize["line"] is Double && oversize["noNewline"] is Double, "\(oversize)")
            // One byte each 100 ms: closed after about 1 s, before it was all sent.
            let slow = try await run(net, ["slow", address])
            #expect((slow["closedAfter"] as? Double ?? 99) < 2.5 && (slow["sent"] as? Int ?? 0) < (slow["of"] as? Int ?? 0), "\(slow)")
            // A certificate naming another device, and (v8) another id inside TLS: no link.
            let wrongCN = try await run(net, ["wrong-cn", address])
            #expect(wrongCN["closed"] is Double, "\(wrongCN)")
            let idChange = try await run(net, ["id-change", address])
            #expect(idChange["closed"] is Double, "\(idChange)")
            // A device not paired sends a 64 MiB packet: closed at 64 KiB, nothing held.
            let big = try await run(net, ["big-packet", address, "64"])
            #expect(big["closed"] as? Bool == true && (big["sent"] as? Int ?? Int.max) < 64 << 20, "\(big)")

            let status = try await KDEConnectTests.status(net, "a")
            #expect(status.running && status.devices.isEmpty, "no hostile device is listed: \(status.devices)")
            let peak = NetnsRun.peakResidentBytes(endpoint)
            #expect(peak < baseline + 32 << 20, "the endpoint's memory: \(baseline >> 20) MiB before, peak \(peak >> 20) MiB")
            #expect(try await endpointPID(net) == endpoint, "the endpoint never restarted")

            // handoffd and the account: as before.
            #expect(net.daemons["a"] == handoffd && kill(handoffd, 0) == 0)
            #expect(try await net.ctl("a", "current", "--json").stdout.contains(url))
            let continued = try await net.ctl("b", "continue", "--print", "--json")
            #expect(continued.status == 0 && continued.stdout.contains(url), "\(continued)")
            let log = (try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? ""
            #expect(log.contains("its certificate names"), "the wrong CN is logged as such")
            #expect(log.contains("the device id changed across TLS"), "the id change is logged as such")
        }
    }
}
}

/// The endpoint's limits as the tests expect them (Docs/KDEConnect.md).
enum KDEConnectLimitsForTests {
    static let pending = 42
}
