import Foundation
import HandoffClient
import HandoffCore
import HandoffTestSupport
import Testing

/// What goes wrong around handoff, not inside it: the continuing side dying in the middle
/// of a stream, avahi-daemon restarting, an interface going down and up. Each between two
/// namespace workstations; the origin's app and the peers must hear within seconds and
/// carry on. Root only.
extension WorkstationTests {
@Suite struct FaultTests {
    func withPair(_ body: (NetnsRun) async throws -> Void) async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            try await body(net)
        }
    }

    func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    func count(_ needle: String, in path: String) -> Int { text(path).components(separatedBy: needle).count - 1 }

    @Test func theContinuingSideDyingMidStreamReachesTheOriginApp() async throws {
        try await withPair { net in
            let ctl = try TestEnvironment.binary("handoffctl")
            // An endless origin app: the stream is mid-flight whenever the other side goes.
            let ownerLog = net.directory + "/owner.log"
            let owner = try await net.spawn("a", log: ownerLog, [
                ctl, "become-current", "--type", "org.example.live", "--attach",
                "--stream-exec", "while :; do head -c 65536 /dev/zero; sleep 0.05; done",
            ])
            defer { net.stop(owner, SIGKILL) }
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains("org.example.live") }

            // 1. The continuing app is killed: its handoffd is still there and says so.
            let reader = try await net.spawn("b", log: net.directory + "/reader1.log", [ctl, "continue", "--stream-to", "/dev/null"])
            try await eventually(10, "the first stream to start") { count("stream requested by ws-b", in: ownerLog) == 1 }
            // Mid-flight: b's handoffd has the stream open towards its app (its log says so).
            try await eventually(10, "the first stream to be open end to end") {
                count("continuation stream opened", in: net.logPath("b")) >= 1
            }
            net.stop(reader, SIGKILL)
            try await eventually(5, "the origin app to hear that the continuing app went") {
                count("stream to ws-b failed", in: ownerLog) == 1
            }

            // 2. The continuing workstation's handoffd is killed: its connection closes.
            let reader2 = try await net.spawn("b", log: net.directory + "/reader2.log", [ctl, "continue", "--stream-to", "/dev/null"])
            defer { net.stop(reader2, SIGKILL) }
            try await eventually(10, "the second stream to start") { count("stream requested by ws-b", in: ownerLog) == 2 }
            try await eventually(10, "the second stream to be open end to end") {
                count("continuation stream opened", in: net.logPath("b")) >= 2
            }
            await net.kill("b")
            try await eventually(5, "the origin app to hear that the continuing workstation went") {
                count("stream to ws-b failed", in: ownerLog) == 2
            }
            // Neither failure is the origin's: its app is still there, and its handoffd too.
            #expect(try await net.wait(owner, timeout: 0.1) == nil, "the origin app exited: \(text(ownerLog))")
            #expect(try await net.ctl("a", "current").stdout.contains("org.example.live"))
        }
    }

    @Test func anAvahiRestartIsAdvertisedAgainWithinFiveSeconds() async throws {
        try await withPair { net in
            let addressA = try await net.address("a")
            // A browser on b that stays: every add, resolve and removal, in order.
            let browseLog = net.directory + "/browse.log"
            let browser = try await net.spawn("b", log: browseLog, ["avahi-browse", "-rp", "_handoff._tcp"])
            defer { net.stop(browser, SIGKILL) }
            try await eventually(10, "b to resolve a's service") { text(browseLog).contains(";\(addressA);") }
            let restart = try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "avahi-restart", net.name, "a"], environment: net.environment)
            #expect(restart.status == 0, "\(restart)")
            // avahi-daemon runs again; from here handoffd has 5 s to be found once more.
            let mark = text(browseLog).utf8.count
            let restarted = Date()
            func resolvesA(_ lines: String) -> Bool {
                lines.split(separator: "\n").contains { $0.hasPrefix("=;") && $0.contains(";\(addressA);") }
            }
            try await eventually(5, "b to resolve a's service again after the restart\n\(text(browseLog))") {
                if resolvesA(String(decoding: Array(text(browseLog).utf8.dropFirst(mark)), as: UTF8.self)) { return true }
                // a's avahi-daemon said goodbye for the service as it stopped, and b keeps a
                // record for a second after its goodbye. An announcement arriving within that
                // second refreshes the record instead of removing and adding it, and then the
                // browser above prints nothing new. So, once that second is over: a's own
                // avahi-daemon (fresh, so only handoffd can have registered the service)
                // resolves it, and b still does.
                guard Date().timeIntervalSince(restarted) > 1.5 else { return false }
                let onA = try await net.exec("a", ["avahi-browse", "-rpt", "_handoff._tcp"])
                let onB = try await net.exec("b", ["avahi-browse", "-rpt", "_handoff._tcp"])
                return resolvesA(onA.stdout) && resolvesA(onB.stdout)
            }
            print("a re-advertised \(Date().timeIntervalSince(restarted)) s after avahi-daemon came back")
            #expect(try await net.ctl("a", "status").stdout.contains("discovery: available"))
        }
    }

    @Test func anInterfaceGoingDownAndUpIsLinkedAgain() async throws {
        try await withPair { net in
            let idA = try await net.deviceID("a"), idB = try await net.deviceID("b")
            // a's own interface, not the bridge: a sees its address go and come back.
            let down = try await net.exec("a", ["ip", "link", "set", "hnd0", "down"])
            #expect(down.status == 0, "\(down)")
            try await eventually(12, "b to notice that a is gone") { try await !net.isConnected("b", to: idA) }
            let up = try await net.exec("a", ["ip", "link", "set", "hnd0", "up"])
            #expect(up.status == 0, "\(up)")
            try await eventually(10, "a and b to link again") {
                let ab = try await net.isConnected("a", to: idB), ba = try await net.isConnected("b", to: idA)
                return ab && ba
            }
            _ = try await net.ctl("a", "become-current", "--type", "org.example.after.flap", "--title", "Back again")
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains("Back again") }
            #expect(try await net.ctl("b", "continue", "--print").status == 0)
            #expect(try await net.ctl("a", "status").stdout.contains("discovery: available"))
        }
    }
}
}
