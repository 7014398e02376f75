import Foundation
import HandoffTestSupport
import Testing

/// A link that dies without a word (the cable pulled: a's bridge port goes down, so
/// neither side gets an error) is noticed within seconds and dialled again as soon as
/// the network is back; a continuation stream whose reader pauses longer than that is
/// not cut. Root only.
extension WorkstationTests {
@Suite struct LinkRecoveryTests {
    /// a's port on the run's bridge (a is the first host: p1).
    func bridgePort(_ net: NetnsRun, up: Bool) async throws {
        let r = try await CommandLineTool.run("/usr/sbin/ip", ["-n", "hnd-\(net.name)-br", "link", "set", "p1", up ? "up" : "down"],
                                              environment: net.environment)
        #expect(r.status == 0, "\(r)")
    }

    @Test func aDeadLinkIsNoticedAndRedialledWithinTenSeconds() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let idA = try await net.deviceID("a"), idB = try await net.deviceID("b")
            func log(_ host: String) -> String { (try? String(contentsOfFile: net.logPath(host), encoding: .utf8)) ?? "" }
            let marks = ["a": log("a").utf8.count, "b": log("b").utf8.count]
            try await bridgePort(net, up: false)
            // 9 s of keepalive, and a moment to poll.
            try await eventually(11, "b to notice that a is gone") { try await !net.isConnected("b", to: idA) }
            try await eventually(3, "a to notice that b is gone") { try await !net.isConnected("a", to: idB) }
            // They keep trying meanwhile (one side dials, the other waits for it): the network
            // comes back only after a dial into the outage has failed.
            func since(_ host: String) -> String { String(decoding: log(host).utf8.dropFirst(marks[host]!), as: UTF8.self) }
            do {
                try await eventually(20, "a dial into the outage to fail") { ["a", "b"].contains { since($0).contains("dial failed") } }
            } catch {
                // What each side did about the dead link: its dial decisions and link events.
                let evidence = ["a", "b"].map { host in
                    "--- \(host) ---\n" + since(host).split(separator: "\n").filter { $0.contains("dial") || $0.contains("link") || $0.contains("peer") }
                        .suffix(25).joined(separator: "\n")
                }
                throw TestFailure("\(error)\n" + evidence.joined(separator: "\n"))
            }
            try await bridgePort(net, up: true)
            try await eventually(10, "a and b to link again") {
                let ab = try await net.isConnected("a", to: idB), ba = try await net.isConnected("b", to: idA)
                return ab && ba
            }
            _ = try await net.ctl("a", "become-current", "--type", "org.example.after.outage", "--title", "Back")
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains("Back") }
            #expect(try await net.ctl("b", "continue", "--print").status == 0)
        }
    }

    /// mDNS may lose a peer while it is linked (its random name changes, the first time
    /// right after pairing, and the new name's resolve can fail; here avahi-daemon stops on
    /// both sides). When the link then dies, the peer is dialled where the link reached it.
    @Test func aDeadLinkComesBackWhenMDNSHasLostThePeer() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let idA = try await net.deviceID("a"), idB = try await net.deviceID("b")
            for h in ["a", "b"] {
                #expect(try await net.exec(h, ["sh", "-c", "kill $(cat /run/avahi-daemon/pid)"]).status == 0)
            }
            for h in ["a", "b"] {
                try await eventually(10, "avahi-daemon on \(h) to stop") {
                    try await net.exec(h, ["sh", "-c", "test -e /run/avahi-daemon/pid && kill -0 $(cat /run/avahi-daemon/pid)"]).status != 0
                }
                try await eventually(10, "\(h) to see discovery stop") { try await net.ctl(h, "status").stdout.contains("discovery: unavailable") }
            }
            let stillLinked = try await net.isConnected("a", to: idB), stillLinkedB = try await net.isConnected("b", to: idA)
            #expect(stillLinked && stillLinkedB, "the link does not need mDNS")
            try await bridgePort(net, up: false)
            try await eventually(11, "b to notice that a is gone") { try await !net.isConnected("b", to: idA) }
            try await eventually(11, "a to notice that b is gone") { try await !net.isConnected("a", to: idB) }
            try await bridgePort(net, up: true)
            // The backoff of dials into the outage is at most 4 s by now.
            try await eventually(15, "a and b to link again without mDNS") {
                let ab = try await net.isConnected("a", to: idB), ba = try await net.isConnected("b", to: idA)
                return ab && ba
            }
            _ = try await net.ctl("a", "become-current", "--type", "org.example.after.outage", "--title", "Back")
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains("Back") }
        }
    }

    @Test func aReaderThatPausesLongerThanALinkTimeoutKeepsItsStream() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let source = net.directory + "/film.bin", out = net.directory + "/received.bin"
            #expect(try await net.exec("a", ["/bin/sh", "-c", "head -c 16777216 /dev/urandom > \(source)"]).status == 0)
            _ = try await net.ctl("a", "become-current", "--type", "org.example.film", "--title", "Film", "--stream-file", source)
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains("Film") }
            // The reader takes nothing for 15 s: every buffer on the way fills, and TCP
            // windows close all the way back to a.
            let ctl = try TestEnvironment.binary("handoffctl")
            let reader = try await net.spawn("b", log: net.directory + "/reader.log", ["/bin/sh", "-c",
                "\(ctl) continue --stream-to - | (sleep 15; cat > \(out))"])
            let status = try await net.wait(reader, timeout: 60)
            #expect(status == 0, "\((try? String(contentsOfFile: net.directory + "/reader.log", encoding: .utf8)) ?? "")")
            let sums = try await net.exec("a", ["sha256sum", source, out]).stdout.split(separator: "\n").map { $0.prefix(64) }
            #expect(sums.count == 2 && sums[0] == sums[1], "the stream arrived whole")
        }
    }
}
}
