import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

/// Two or three workstations in network namespaces, each with its own D-Bus, avahi-daemon
/// and handoffd: discovery, trust, offers, continuing, failures. Root only (CI is root).
extension WorkstationTests {
@Suite struct AcrossWorkstationsTests {
    /// Every value type, nested, in the typed-JSON convention.
    static let payload = #"""
        {"text": "Grüße \"quoted\"", "int": -9007199254740993, "double": 0.1, "whole": 2.0, "yes": true, "no": null,
         "bytes": {"$data": "AAEC/w=="}, "when": {"$date": "2026-11-21T10:00:00.123456789Z"},
         "link": {"$url": "https://example.org/a?b=c"}, "tags": {"$set": ["x", 1, 2.5]},
         "list": [1, [2, {"deep": {"$date": "1999-12-31T23:59:59.999Z"}}], {"$data": ""}],
         "$$dollar": {"inner": {"$set": []}}}
        """#

    func json(_ r: CommandResult) throws -> JSONObject {
        guard r.status == 0 else { throw TestFailure("command failed: \(r)") }
        guard let o = try JSONValue(parsing: r.stdout).objectValue else { throw TestFailure("not a JSON object: \(r.stdout)") }
        return o
    }

    @Test func discoverTrustOfferAndContinue() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            let idA = try await net.deviceID("a"), idB = try await net.deviceID("b")
            #expect(idA != idB)
            // What anyone on the network sees: random names, and TXT v, h and t (a tag only
            // the account's members can check); no device name, no device ID.
            // Bounded: -t waits for every resolver, and one that never answers hung a run.
            var lines: [Substring] = []
            try await eventually(20, "both advertisements") {
                let browse = try await net.exec("b", ["timeout", "-k", "2", "10", "avahi-browse", "-rtp", "_handoff._tcp"])
                lines = browse.stdout.split(separator: "\n").filter { $0.hasPrefix("=") }
                return Set(lines.map { $0.split(separator: ";").dropFirst(3).first ?? "" }).count >= 2
            }
            for line in lines {
                #expect(line.contains("\"v=4\"") && line.contains("\"h=") && line.contains("\"t="), "\(line)")
                #expect(!line.contains("ws-a") && !line.contains("ws-b"), "no device name in mDNS: \(line)")
                #expect(!line.contains(idA.prefix(7)) && !line.contains(idB.prefix(7)), "no device ID in mDNS: \(line)")
            }
            // Strangers are neither dialled nor listed: once each handoffd has found the
            // other's instance (its debug log says so), it has decided whether to dial it.
            let a4 = try await net.address("a"), a6 = try await net.address6("a")
            let b4 = try await net.address("b"), b6 = try await net.address6("b")
            let addresses = ["a": [a4, a6], "b": [b4, b6]]
            for (host, other) in [("a", "b"), ("b", "a")] {
                try await eventually(20, "\(host)'s handoffd to find \(other)'s instance") {
                    let log = (try? String(contentsOfFile: net.logPath(host), encoding: .utf8)) ?? ""
                    return log.split(separator: "\n").contains { line in
                        line.contains(">found ") && addresses[other]!.contains { !$0.isEmpty && line.contains($0) }
                    }
                }
            }
            #expect(try await !net.ctl("a", "peers", "--json").stdout.contains(idB))
            #expect(try await net.ctl("b", "list").stdout.contains("nothing offered"))
            // Trust exchange.
            try await net.pair("a", "b")
            // An attached owner on A, watching its events (it prints them as JSON lines).
            let infoFile = net.directory + "/info.json"
            try AcrossWorkstationsTests.payload.write(toFile: infoFile, atomically: true, encoding: .utf8)
            let ownerLog = net.directory + "/owner.log"
            let owner = try await net.spawn("a", log: ownerLog, [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.editor.edit-note",
                "--title", "Every type", "--info-json", infoFile, "--required-keys", "text,when",
                "--webpage-url", "https://example.org/notes/1", "--attach", "--json",
            ])
            defer { net.stop(owner, SIGKILL) }
            // It shows up in B's list.
            try await eventually(10, "the offer to reach b") {
                try await net.ctl("b", "list").stdout.contains("org.example.editor.edit-note")
            }
            let offers = try json(try await net.ctl("b", "list", "--json"))
            guard case .array(let list)? = offers["offers"], let first = list.first?.objectValue else { throw TestFailure("no offers") }
            #expect(first["device"]?.objectValue?["id"]?.stringValue == idA)
            #expect(first["activity"]?.objectValue?["userInfo"] == nil, "summaries carry no userInfo")
            // Continue on B returns exactly A's payload.
            let continued = try json(try await net.ctl("b", "continue", "--json"))
            let expected = try TypedJSON.decode(dictionary: try JSONValue(parsing: AcrossWorkstationsTests.payload).objectValue!, path: "userInfo")
            let got = try TypedJSON.decode(dictionary: continued["userInfo"]!.objectValue!, path: "userInfo")
            #expect(got == expected)
            #expect(continued["activityType"] == .string("org.example.editor.edit-note"))
            #expect(continued["webpageURL"] == .string("https://example.org/notes/1"))
            #expect(continued["device"]?.objectValue?["name"] == .string("ws-a"))
            #expect(continued["stale"] == .bool(false))
            // was-continued reaches A's owner.
            try await eventually(10, "was-continued at the owner") {
                ((try? String(contentsOfFile: ownerLog, encoding: .utf8)) ?? "").contains("\"was-continued\"")
            }
            let ownerText = try String(contentsOfFile: ownerLog, encoding: .utf8)
            #expect(ownerText.contains(idB), "the event names the continuing device")
            // Human output and --from/--type filters.
            let human = try await net.ctl("b", "continue", "--from", "ws-a", "--type", "org.example.editor.edit-note")
            #expect(human.status == 0, "\(human)")
            #expect(human.stdout.contains("continued from ws-a"))
            let none = try await net.ctl("b", "continue", "--type", "org.example.other")
            #expect(none.status == 1)
            #expect(none.stderr.contains("no workstation offers an activity of type org.example.other"), "\(none)")
        }
    }

    @Test func freshPayloadFromAnAttachedOwner() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a", ["--will-save-timeout-ms", "5000"])
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let counter = net.directory + "/position"
            try "10".write(toFile: counter, atomically: true, encoding: .utf8)
            let owner = try await net.spawn("a", log: net.directory + "/owner.log", [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.player.watch",
                "--info", "position:=0", "--needs-save", "--attach",
                "--refresh-with", "echo \"{\\\"position\\\": $(cat \(counter))}\"",
            ])
            defer { net.stop(owner, SIGKILL) }
            try await eventually(10, "the offer to reach b") {
                try await net.ctl("b", "list").stdout.contains("org.example.player.watch")
            }
            try "4242".write(toFile: counter, atomically: true, encoding: .utf8)
            let continued = try json(try await net.ctl("b", "continue", "--json"))
            #expect(continued["userInfo"] == .object(["position": .integer(4242)]))
            #expect(continued["stale"] == .bool(false))
        }
    }

    @Test func untrustedWorkstationLearnsNothing() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.startDaemon("c")
            try await net.pair("a", "b")
            let idA = try await net.deviceID("a"), idC = try await net.deviceID("c")
            _ = try await net.ctl("a", "become-current", "--type", "org.example.secret.plan", "--title", "Top secret",
                                  "--info", "code=swordfish")
            try await eventually(10, "b to see the offer") { try await net.ctl("b", "list").stdout.contains("secret") }
            // C trusts A, but A does not trust C: the handshake fails, nothing is offered.
            _ = try await net.ctl("c", "trust", idA)
            // Over IPv4 or IPv6: each instance is resolved over whichever family Avahi reports first.
            let addressesC = [try await net.address("c"), try await net.address6("c")]
            try await eventually(20, "c to try a's port") {
                let log = (try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? ""
                return addressesC.contains { log.contains($0) }
            }
            let cList = try await net.ctl("c", "list")
            #expect(cList.stdout.contains("nothing offered"), "\(cList)")
            let cContinue = try await net.ctl("c", "continue")
            #expect(cContinue.status == 1)
            #expect(!cContinue.stdout.contains("swordfish") && !cContinue.stderr.contains("swordfish"))
            // A stranger is not even listed (outside a pairing window).
            #expect(try await !net.ctl("a", "peers", "--json").stdout.contains(idC))
            // A stranger with a random certificate: refused in the handshake, no activity bytes.
            let port = try net.peerPort("a")
            let address = try await net.address("a")
            let keyDir = net.directory + "/stranger"
            try FileManager.default.createDirectory(atPath: keyDir, withIntermediateDirectories: true)
            let gen = try await CommandLineTool.run("/usr/bin/openssl", [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-subj", "/CN=stranger", "-keyout", keyDir + "/key.pem", "-out", keyDir + "/cert.pem",
            ], environment: net.environment)
            #expect(gen.status == 0, "\(gen)")
            let s = try await net.exec("c", [
                "timeout", "10", "openssl", "s_client", "-connect", "\(address):\(port)", "-tls1_3",
                "-cert", keyDir + "/cert.pem", "-key", keyDir + "/key.pem", "-quiet",
            ], stdin: "hello?\n")
            let all = s.stdout + s.stderr
            #expect(!all.contains("swordfish") && !all.contains("secret") && !all.contains("HNDF"), "\(all)")
            #expect(all.lowercased().contains("alert") || all.contains("error"), "the handshake must fail: \(all)")
            // Without any certificate at all: the same.
            let bare = try await net.exec("c", ["timeout", "10", "openssl", "s_client", "-connect", "\(address):\(port)", "-tls1_3", "-quiet"], stdin: "x\n")
            #expect(!(bare.stdout + bare.stderr).contains("swordfish"))
            #expect(try await net.ctl("a", "status").status == 0)
        }
    }

    /// SEMANTICS: the continuing side's apps hear `will-continue` (type and origin) before
    /// the payload arrives, so they can show progress; a continue that never starts a
    /// fetch (nothing offered) says only `did-fail-to-continue`.
    @Test func willContinueComesBeforeTheActivity() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let watchLog = net.directory + "/watch.log"
            let watcher = try await net.spawn("b", log: watchLog, [try TestEnvironment.binary("handoffctl"), "watch", "--json"])
            defer { net.stop(watcher, SIGKILL) }
            func lines() -> [String] { ((try? String(contentsOfFile: watchLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
            try await eventually(10, "the watcher's session to be open") {
                try await net.ctl("b", "status", "--json").stdout.contains("\"sessions\": 1")
            }

            let none = try await net.ctl("b", "continue", "--type", "org.example.nobody")
            #expect(none.status == 1)
            try await eventually(5, "did-fail-to-continue") { lines().contains { $0.contains("\"did-fail-to-continue\"") } }
            #expect(!lines().contains { $0.contains("\"will-continue\"") }, "no fetch started, so no will-continue")

            _ = try await net.ctl("a", "become-current", "--type", "org.example.editing", "--title", "Draft")
            try await eventually(10, "offer at b") { try await net.ctl("b", "list").stdout.contains("Draft") }
            let continued = try await net.ctl("b", "continue")
            #expect(continued.status == 0, "\(continued)")
            try await eventually(5, "continued at the watcher") { lines().contains { $0.contains("\"event\":\"continued\"") } }
            let all = lines()
            let will = try #require(all.firstIndex { $0.contains("\"will-continue\"") }, "\(all)")
            let done = try #require(all.firstIndex { $0.contains("\"event\":\"continued\"") })
            #expect(will < done, "will-continue first: \(all)")
            #expect(all[will].contains("org.example.editing") && all[will].contains("ws-a"), "type and origin: \(all[will])")
        }
    }

    /// Restoration state stays on its workstation, except what an app marked to go with
    /// one of its activities: that arrives in the continued activity's userInfo.
    @Test func restorationStateTravelsOnlyWithTheActivityItWasMarkedFor() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let id = try await net.ctl("a", "become-current", "--type", "org.example.editor.edit-note", "--title", "Notes")
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            func put(_ app: String, _ body: String) async throws -> CommandResult {
                try await net.exec("a", ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--unix-socket", net.socket("a"), "-X", "PUT",
                                         "-H", "Content-Type: application/json", "--data", body, "http://h/v1/state/\(app)"])
            }
            #expect(try await put("org.example.Editor", #"{"version":"3","entries":{"Tabs/Editor":{"line":7}},"continueWith":"\#(id)"}"#).stdout == "200")
            #expect(try await put("org.example.Other", #"{"version":"1","entries":{"Secret/Pane":"do not send"}}"#).stdout == "200")
            try await eventually(10, "offer at b") { try await net.ctl("b", "list").stdout.contains("Notes") }
            let continued = try await net.ctl("b", "continue", "--json")
            #expect(continued.status == 0, "\(continued)")
            #expect(continued.stdout.contains("handoff.restoration") && continued.stdout.contains("Tabs/Editor")
                    && continued.stdout.contains("org.example.Editor"), "\(continued.stdout)")
            #expect(!continued.stdout.contains("do not send"), "state not marked for the activity stays home")
            // Nothing of a's state is kept on b.
            #expect(try await net.ctl("b", "state").stdout.contains("no app has saved"))
        }
    }

    @Test func invalidationAndExpiryReachThePeer() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let watchLog = net.directory + "/watch.log"
            let watcher = try await net.spawn("b", log: watchLog, [try TestEnvironment.binary("handoffctl"), "watch", "--json"])
            defer { net.stop(watcher, SIGKILL) }
            _ = try await net.ctl("a", "become-current", "--type", "org.example.shortlived")
            try await eventually(10, "offer at b") { try await net.ctl("b", "list").stdout.contains("shortlived") }
            _ = try await net.ctl("a", "invalidate")
            try await eventually(10, "the invalidated offer to leave b's list") {
                try await net.ctl("b", "list").stdout.contains("nothing offered")
            }
            _ = try await net.ctl("a", "become-current", "--type", "org.example.expiring", "--expires", "2s")
            try await eventually(10, "offer at b") { try await net.ctl("b", "list").stdout.contains("expiring") }
            try await eventually(10, "the expired offer to leave b's list") {
                try await net.ctl("b", "list").stdout.contains("nothing offered")
            }
            let expired = try await net.ctl("b", "continue", "--type", "org.example.expiring")
            #expect(expired.status == 1)
            // The watcher is another process: its last line lands a moment after `continue` returns.
            try await eventually(5, "did-fail-to-continue at the watcher") {
                ((try? String(contentsOfFile: watchLog, encoding: .utf8)) ?? "").contains("\"did-fail-to-continue\"")
            }
            let events = try String(contentsOfFile: watchLog, encoding: .utf8)
            #expect(events.contains("\"peer-offer\""))
            #expect(events.contains("\"activity\":null"), "a withdrawal event: \(events)")
            #expect(events.contains("\"did-fail-to-continue\""))
            // Untrusting closes the connection at once and keeps it closed.
            let idA = try await net.deviceID("a"), idB = try await net.deviceID("b")
            let untrust = try await net.ctl("a", "untrust", idB)
            #expect(untrust.status == 0, "\(untrust)")
            try await eventually(10, "b to lose a") { try await !net.isConnected("b", to: idA) }
            _ = try await net.ctl("a", "become-current", "--type", "org.example.after.untrust")
            // b redials a lost peer at once, and a link would bring the offer within
            // milliseconds: 1.5 s of nothing shows it.
            try await eventually(5, "b to list nothing of a's") { try await net.ctl("b", "list").stdout.contains("nothing offered") }
            try await never(within: 1.5, because: "a's offer reached b after a untrusted b") {
                try await !net.ctl("b", "list").stdout.contains("nothing offered")
            }
            let again = try await net.ctl("a", "untrust", idB)
            #expect(again.status == 1)
            #expect(again.stderr.contains("was not trusted"))
        }
    }

    @Test func survivesAvahiAndDaemonRestarts() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let idA = try await net.deviceID("a")
            // avahi-daemon on A restarts: B sees A's service again.
            let restart = try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "avahi-restart", net.name, "a"], environment: net.environment)
            #expect(restart.status == 0, "\(restart)")
            let addressA = try await net.address("a")
            try await eventually(20, "b to browse a's service again") {
                try await net.exec("b", ["timeout", "-k", "2", "10", "avahi-browse", "-rtp", "_handoff._tcp"]).stdout.contains(";\(addressA);")
            }
            try await eventually(20, "a to say discovery is running again") {
                try await net.ctl("a", "status").stdout.contains("discovery: available")
            }
            // handoffd on A killed and restarted: B reconnects and continues.
            await net.kill("a", SIGKILL)
            try await eventually(20, "b to notice a is gone") { try await !net.isConnected("b", to: idA) }
            try await net.startDaemon("a")
            #expect(try await net.deviceID("a") == idA, "the identity survives restarts")
            try await eventually(30, "b to reconnect to a") { try await net.isConnected("b", to: idA) }
            _ = try await net.ctl("a", "become-current", "--type", "org.example.after.restart", "--info", "ok:=true")
            try await eventually(10, "offer at b") { try await net.ctl("b", "list").stdout.contains("after.restart") }
            let continued = try json(try await net.ctl("b", "continue", "--json"))
            #expect(continued["userInfo"] == .object(["ok": .bool(true)]))
        }
    }

    @Test func garbageAndOversizeFramesHarmNothing() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            _ = try await net.ctl("a", "become-current", "--type", "org.example.sturdy", "--info", "v:=1")
            let port = try net.peerPort("a")
            let address = try await net.address("a")
            // Plain garbage, no TLS.
            let junk = String(repeating: "\u{1}GARBAGE\u{0}", count: 4000)
            _ = try await net.exec("b", ["timeout", "5", "bash", "-c", "cat > /dev/tcp/\(address)/\(port)"], stdin: junk)
            // A trusted certificate (B's own) over TLS, then frames that break the rules.
            let cert = net.stateDirectory("b") + "/device-cert.pem", key = net.stateDirectory("b") + "/device-key.pem"
            for bytes in ["\\x7f\\xff\\xff\\xff", "\\x00\\x00\\x00\\x00", "\\x00\\x00\\x00\\x05\\x09garbage", "\\x00\\x00\\x00\\x03\\x01HN"] {
                let r = try await net.exec("b", ["timeout", "10", "bash", "-c",
                    "printf '\(bytes)' | openssl s_client -connect \(address):\(port) -tls1_3 -cert \(cert) -key \(key) -quiet -ign_eof"])
                #expect(!r.stdout.contains("sturdy") || bytes.contains("\\x01HN"), "\(r)")
            }
            // A is unharmed: still serving, and B still continues.
            #expect(try await net.ctl("a", "status").status == 0)
            let idA = try await net.deviceID("a")
            try await eventually(30, "b connected to a") { try await net.isConnected("b", to: idA) }
            let continued = try json(try await net.ctl("b", "continue", "--json"))
            #expect(continued["userInfo"] == .object(["v": .integer(1)]))
        }
    }

    @Test func startsWithoutAvahiAndAdvertisesOnceItRuns() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            // No avahi-daemon on A: the local API works, and status says why discovery does not.
            let stop = try await net.exec("a", ["sh", "-c", "kill $(cat /run/avahi-daemon/pid)"])
            #expect(stop.status == 0, "\(stop)")
            try await eventually(10, "avahi-daemon on a to stop") {
                try await net.exec("a", ["sh", "-c", "test -e /run/avahi-daemon/pid && kill -0 $(cat /run/avahi-daemon/pid)"]).status != 0
            }
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            let status = try await net.ctl("a", "status")
            #expect(status.stdout.contains("discovery: unavailable: avahi-daemon is not running"), "\(status)")
            let made = try await net.ctl("a", "become-current", "--type", "org.example.offline")
            #expect(made.status == 0, "\(made)")
            // avahi-daemon starts: A advertises on its own, and B finds it.
            let start = try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "avahi-restart", net.name, "a"], environment: net.environment)
            #expect(start.status == 0, "\(start)")
            try await eventually(20, "a's discovery to become available") {
                try await net.ctl("a", "status").stdout.contains("discovery: available")
            }
            // B finds A once they trust each other (strangers are not dialled).
            try await net.pair("a", "b")
            try await eventually(10, "a's offer at b") { try await net.ctl("b", "list").stdout.contains("org.example.offline") }
        }
    }

    /// Two workstations with the same device name: the advertisement never carries it, so
    /// nothing collides, and each is still itself to the other.
    @Test func twoWorkstationsWithOneNameStayApart() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a", ["--name", "twin"])
            try await net.startDaemon("b", ["--name", "twin"])
            var names: Set<Substring> = []
            try await eventually(20, "two advertisements") {
                let browse = try await net.exec("a", ["timeout", "-k", "2", "10", "avahi-browse", "-rtp", "_handoff._tcp"])
                names = Set(browse.stdout.split(separator: "\n").filter { $0.hasPrefix("=") }.compactMap { $0.split(separator: ";").dropFirst(3).first })
                return names.count == 2
            }
            #expect(!names.contains { $0.contains("twin") }, "\(names)")
            #expect(names.allSatisfy { $0.prefix(12).allSatisfy(\.isHexDigit) }, "random names: \(names)")
            try await net.pair("a", "b")
        }
    }

    @Test func linksOutliveThePreAuthenticationDeadlineButStrangersDoNot() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            let short = ["--peer-handshake-timeout-ms", "1500"]
            try await net.startDaemon("a", short)
            try await net.startDaemon("b", short)
            let watchLog = net.directory + "/watch.log"
            let watcher = try await net.spawn("b", log: watchLog, [try TestEnvironment.binary("handoffctl"), "watch", "--json"])
            defer { net.stop(watcher, SIGKILL) }
            try await eventually(10, "the watcher's session to be open") {
                try await net.ctl("b", "status", "--json").stdout.contains("\"sessions\": 1")
            }
            try await net.pair("a", "b")
            func linkEvents() throws -> Int {
                let text = try String(contentsOfFile: watchLog, encoding: .utf8)
                return text.components(separatedBy: "\"peer-connected\"").count + text.components(separatedBy: "\"peer-disconnected\"").count
            }
            // The watcher is another process: the link's event lands a moment after pair returns.
            try await eventually(10, "the watcher to see the link") {
                ((try? String(contentsOfFile: watchLog, encoding: .utf8)) ?? "").contains("\"peer-connected\"")
            }
            let settled = try linkEvents()
            // Well past the deadline, the authenticated link is still the same one. Time is
            // what is tested: 4 s is more than twice the 1.5 s handshake deadline under test.
            let idA = try await net.deviceID("a")
            try await never(within: 4, because: "the authenticated link dropped at the handshake deadline") { try await !net.isConnected("b", to: idA) }
            let after = try linkEvents(), log = try String(contentsOfFile: watchLog, encoding: .utf8)
            #expect(after == settled, "the link dropped or reconnected: \(log)")
            // A connection that never authenticates is closed at the deadline.
            let address = try await net.address("a"), port = try net.peerPort("a")
            let started = Date()
            let idle = try await net.exec("b", ["timeout", "20", "bash", "-c", "exec 3<>/dev/tcp/\(address)/\(port); cat <&3 >/dev/null"])
            let waited = Date().timeIntervalSince(started)
            #expect(idle.status == 0, "the daemon, not timeout(1), must end it: \(idle)")
            #expect(waited < 15, "closed after \(waited) s")
            // Forty strangers at once from one address, beyond its cap of 8 unauthenticated
            // connections: the excess is refused and nothing leaks (the open files come back).
            guard let pidA = net.daemons["a"] else { throw TestFailure("no pid for a") }
            func openFiles() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pidA)/fd").count) ?? -1 }
            let before = openFiles()
            let flood = try await net.exec("b", ["bash", "-c", "for i in $(seq 40); do (exec 3<>/dev/tcp/\(address)/\(port); sleep 2) 2>/dev/null & done; wait"])
            #expect(flood.status == 0, "\(flood)")
            try await eventually(10, "a's open files to come back to \(before)") { openFiles() <= before + 2 }
            #expect(try await net.isConnected("b", to: idA))
            #expect(try await net.ctl("a", "status").status == 0)
        }
    }
}
}
