import Foundation
import HandoffTestSupport
import Testing

/// Pairing by a 6-digit code, as a user meets it: `handoffctl pair` on two namespace
/// workstations (real avahi-daemons, real TLS), both print the same code, each confirms,
/// and they trust each other, link and continue. A wrong code stops it and trusts
/// nothing. Root only.
extension WorkstationTests {
@Suite struct PairingByCodeTests {
    func code(in log: String) -> String? {
        guard let line = log.split(separator: "\n").first(where: { $0.hasPrefix("Code: ") }) else { return nil }
        let digits = line.dropFirst(6).prefix(7).filter(\.isNumber)
        return digits.count == 6 ? String(digits) : nil
    }

    func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Starts `handoffctl pair` on both and waits until both show a code; (a's, b's, pids).
    func startPairing(_ net: NetnsRun) async throws -> (String, String, Int32, Int32) {
        let ctl = try TestEnvironment.binary("handoffctl")
        let pa = try await net.spawn("a", log: net.directory + "/pair-a.log", [ctl, "pair"])
        let pb = try await net.spawn("b", log: net.directory + "/pair-b.log", [ctl, "pair"])
        var codes: (String?, String?) = (nil, nil)
        do {
            try await eventually(30, "both workstations to show a code") {
                codes = (self.code(in: self.read(net.directory + "/pair-a.log")), self.code(in: self.read(net.directory + "/pair-b.log")))
                return codes.0 != nil && codes.1 != nil
            }
        } catch {
            throw TestFailure("\(error)\n--- a ---\n\(read(net.directory + "/pair-a.log"))\n--- b ---\n\(read(net.directory + "/pair-b.log"))")
        }
        return (codes.0!, codes.1!, pa, pb)
    }

    @Test func twoWorkstationsPairByCodeAndContinue() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            let (codeA, codeB, pa, pb) = try await startPairing(net)
            #expect(codeA == codeB, "both screens show the same code")
            #expect(read(net.directory + "/pair-a.log").contains("with ws-b"))
            #expect(read(net.directory + "/pair-a.log").contains("handoffctl pair --code \(codeA)"), "without a terminal it says how to confirm")
            // Confirmed on a, then on b (as a script does, with the code it was shown); each
            // confirmation waits until both sides confirmed.
            async let confirmA = net.ctl("a", "pair", "--code", codeA)
            try await eventually(10, "a's confirmation to reach its handoffd") { try await net.confirmedHere("a") }
            async let confirmB = net.ctl("b", "pair", "--code", codeB)
            let (ca, cb) = try await (confirmA, confirmB)
            #expect(ca.status == 0 && ca.stdout.contains("paired with ws-b"), "\(ca)")
            #expect(cb.status == 0 && cb.stdout.contains("paired with ws-a"), "\(cb)")
            #expect(try await net.wait(pa, timeout: 10) == 0, "\(read(net.directory + "/pair-a.log"))")
            #expect(try await net.wait(pb, timeout: 10) == 0, "\(read(net.directory + "/pair-b.log"))")
            // Each now trusts the other: they link and continue.
            let idB = try await net.deviceID("b")
            try await eventually(20, "a and b to link") { try await net.isConnected("a", to: idB) }
            let offered = try await net.ctl("a", "become-current", "--type", "org.example.paired", "--title", "After pairing")
            #expect(offered.status == 0)
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains("After pairing") }
            let continued = try await net.ctl("b", "continue", "--print")
            #expect(continued.status == 0 && continued.stdout.contains("org.example.paired"), "\(continued)")
            #expect(try await net.ctl("a", "status", "--json").stdout.contains("\"pair\"") == false)
        }
    }

    @Test func aWrongCodeStopsPairingAndTrustsNothing() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            let (codeA, _, pa, pb) = try await startPairing(net)
            let wrong = String(format: "%06d", (Int(codeA)! + 1) % 1_000_000)
            let r = try await net.ctl("a", "pair", "--code", wrong)
            #expect(r.status == 1 && r.stderr.contains("is not the one shown here"), "\(r)")
            #expect(try await net.wait(pa, timeout: 10) == 1, "a's pair ends: \(read(net.directory + "/pair-a.log"))")
            // b's attempt ended with the connection: b says so and trusts nothing.
            try await eventually(10, "b to hear that the attempt ended") {
                self.read(net.directory + "/pair-b.log").contains("the other workstation")
            }
            _ = try await net.ctl("b", "pair", "--cancel")
            #expect(try await net.wait(pb, timeout: 10) == 1)
            for host in ["a", "b"] {
                let peers = try await net.ctl(host, "peers", "--json").stdout
                #expect(!peers.contains("\"trusted\": true"), "\(host) trusts nothing: \(peers)")
            }
        }
    }

    /// The second workstation needs no terminal: its session agent notifies that a's
    /// pairing, a click opens its window, and a second notification shows the code to
    /// confirm (real dunst on a session bus).
    @Test func theSecondWorkstationPairsFromANotification() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            let desk = try DesktopSession(net, host: "b")
            defer { desk.stop() }
            try await desk.startBus()
            try await desk.startNotificationServer()
            try await desk.startAgent()
            let monitorLog = desk.root + "/notify.log"
            let monitor = try await net.spawn("b", log: monitorLog, ["dbus-monitor", "--address", desk.busAddress,
                                                                      "interface='org.freedesktop.Notifications',member='Notify'"])
            defer { net.stop(monitor, SIGTERM) }
            // dbus-monitor gives up its name once it monitors: from then on it sees every Notify.
            try await eventually(10, "dbus-monitor to monitor") { self.read(monitorLog).contains("member=NameLost") }
            let pa = try await net.spawn("a", log: net.directory + "/pair-a.log", [try TestEnvironment.binary("handoffctl"), "pair"])
            try await eventually(20, "b's notification that a is pairing") { self.read(monitorLog).contains("Pair with \u{201C}ws-a\u{201D}?") }
            #expect(try await desk.run(["dunstctl", "action", "0"]).status == 0)
            var codeA: String?
            try await eventually(20, "both to show a code") {
                codeA = self.code(in: self.read(net.directory + "/pair-a.log"))
                return codeA != nil && self.read(monitorLog).contains("Pairing code")
            }
            let spaced = "\(codeA!.prefix(3)) \(codeA!.suffix(3))"
            #expect(read(monitorLog).contains("Pairing code \(spaced)"), "b's notification shows a's code: \(read(monitorLog))")
            async let confirmA = net.ctl("a", "pair", "--code", codeA!)
            try await eventually(10, "a's confirmation to reach its handoffd") { try await net.confirmedHere("a") }
            #expect(try await desk.run(["dunstctl", "action", "0"]).status == 0)  // "Same code: pair"
            let ca = try await confirmA
            #expect(ca.status == 0 && ca.stdout.contains("paired with ws-b"), "\(ca)")
            #expect(try await net.wait(pa, timeout: 10) == 0)
            try await eventually(10, "b's notification that it paired") { self.read(monitorLog).contains("Paired with ws-a") }
            let idA = try await net.deviceID("a")
            try await eventually(20, "b and a to link") { try await net.isConnected("b", to: idA) }
        }
    }

    /// A man in the middle on host m: it finishes TLS with a and with b under its own
    /// certificate (openssl s_server and s_client) and relays every byte between them.
    /// b commits for the certificate it saw (m's), a checks the opening for the one it
    /// saw (also m's, but as responder): the commitment does not open, a shows no code,
    /// and nothing is trusted. Discovery is off so a and b cannot find each other directly.
    @Test func aRelayWithItsOwnCertificateGetsNoMatchingCode() async throws {
        try await NetnsRun.with(["a", "b", "m"]) { net in
            try await net.startDaemon("a", ["--no-discovery"])
            try await net.startDaemon("b", ["--no-discovery"])
            let dir = net.directory + "/mitm"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let made = try await net.exec("m", ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                 "-keyout", dir + "/m.key", "-out", dir + "/m.pem", "-days", "1", "-subj", "/CN=m"])
            #expect(made.status == 0, "\(made)")
            let ctl = try TestEnvironment.binary("handoffctl")
            let pb = try await net.spawn("b", log: net.directory + "/pair-b.log", [ctl, "pair"])
            let bAddress = try await net.address("b"), bPort = try net.peerPort("b"), mAddress = try await net.address("m")
            let relay = """
                mkfifo \(dir)/back && \
                openssl s_server -accept 7000 -tls1_3 -cert \(dir)/m.pem -key \(dir)/m.key -verify 1 -quiet -naccept 1 < \(dir)/back | \
                openssl s_client -connect \(bAddress):\(bPort) -tls1_3 -cert \(dir)/m.pem -key \(dir)/m.key -quiet > \(dir)/back
                """
            _ = try await net.spawn("m", log: dir + "/relay.log", ["/bin/bash", "-c", relay])
            try await eventually(10, "the relay to listen") { try await net.exec("m", ["sh", "-c", "ss -ltn | grep -q :7000"]).status == 0 }
            let pa = try await net.spawn("a", log: net.directory + "/pair-a.log", [ctl, "pair", "--address", "\(mAddress):7000"])
            try await eventually(20, "a to refuse what the relay passed on") {
                self.read(net.directory + "/pair-a.log").contains("does not open its commitment")
            }
            #expect(code(in: read(net.directory + "/pair-a.log")) == nil, "a shows no code: \(read(net.directory + "/pair-a.log"))")
            // b may have worked out a code, for m's certificate: it matches nothing a shows.
            for (host, pid) in [("a", pa), ("b", pb)] {
                _ = try await net.ctl(host, "pair", "--cancel")
                _ = try await net.wait(pid, timeout: 10)
                let peers = try await net.ctl(host, "peers", "--json").stdout
                #expect(!peers.contains("\"trusted\": true"), "\(host) trusts nothing: \(peers)")
            }
        }
    }

    /// A stranger on c floods a's peer port while a and b pair: pairing still works.
    @Test func aFloodFromAThirdHostLeavesPairingWorking() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            let address = try await net.address("a"), port = try net.peerPort("a"), attacker = try await net.address("c")
            let flooder = try await net.spawn("c", log: net.directory + "/flood.log", [
                "python3", TestEnvironment.packageRoot + "/scripts/dev/peer-flood", "flood", address, String(port),
                "--junk", "1000", "--oversize", "50", "--idle", "64", "--hold", "30",
            ])
            defer { net.stop(flooder, SIGKILL) }
            try await eventually(10, "the flood to be refused") {
                ((try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? "").contains("refusing peer connections from \(attacker)")
            }
            try await net.pairByCode("a", "b")
            let idB = try await net.deviceID("b")
            try await eventually(20, "a and b to link during the flood") { try await net.isConnected("a", to: idB) }
            #expect(try await net.wait(flooder, timeout: 0.1) == nil, "the flood was still on while they paired")
        }
    }
}
}
