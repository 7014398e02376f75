import Foundation
import HandoffTestSupport
import Testing

/// Continuing from a workstation that has gone to sleep (PeerProtocol.md §18), the way a
/// user meets it: a's offer is saved and handed on when logind (a stand-in on a's system
/// bus) announces sleep; a is then frozen and unreachable; b, whose link was down, comes
/// back, finds a's offer kept by c, and continues it. Root only.
extension WorkstationTests {
@Suite struct KeptOffersTests {
    /// HOST's port on the run's bridge (hosts are p1, p2, … in the order given).
    func bridgePort(_ net: NetnsRun, _ port: String, up: Bool) async throws {
        let r = try await CommandLineTool.run("/usr/sbin/ip", ["-n", "hnd-\(net.name)-br", "link", "set", port, up ? "up" : "down"],
                                              environment: net.environment)
        #expect(r.status == 0, "\(r)")
    }

    func offers(_ net: NetnsRun, _ host: String) async throws -> [[String: Any]] {
        let r = try await net.exec(host, ["curl", "-s", "--unix-socket", net.socket(host), "http://localhost/v1/offers"])
        return (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["offers"] as? [[String: Any]] ?? []
    }

    func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// a, b and c started and members of one account (b paired with a, then c with b):
    /// their device IDs, once a and c have linked too.
    func members(_ net: NetnsRun, _ extra: [String] = []) async throws -> (a: String, b: String, c: String) {
        for h in ["a", "b", "c"] { _ = try await net.startDaemon(h, extra) }
        let ids = (a: try await net.deviceID("a"), b: try await net.deviceID("b"), c: try await net.deviceID("c"))
        try await net.pairByCode("a", "b")
        try await net.pairByCode("b", "c")
        try await eventually(30, "a to link with c through the account") { try await net.isConnected("a", to: ids.c) }
        return ids
    }

    /// a's graphical session with a logind stand-in on its system bus, the agent holding the lock.
    func sleepyDesktop(_ net: NetnsRun, _ host: String) async throws -> (desktop: DesktopSession, logind: String, standin: Int32) {
        let logind = net.directory + "/\(host)-logind.log"
        let standin = try await net.spawn(host, log: logind, [TestEnvironment.packageRoot + "/Tests/Fixtures/logind-standin"])
        try await eventually(10, "the logind stand-in on \(host)") { self.text(logind).contains("ready") }
        let desktop = try DesktopSession(net, host: host)
        try await desktop.startBus()
        try await desktop.startAgent()
        try await eventually(10, "\(host)'s agent to take the delay lock") { self.text(logind).contains("inhibit sleep delay by handoff") }
        return (desktop, logind, standin)
    }

    /// logind says the machine sleeps; returns once the agent let it (the stand-in's n-th "asleep").
    func sleep(_ net: NetnsRun, standin: Int32, logind: String, times n: Int = 1) async throws {
        net.stop(standin, SIGUSR1)
        try await eventually(10, "the machine to be let sleep") {
            self.text(logind).components(separatedBy: "asleep after").count - 1 >= n
        }
    }

    func offersFrom(_ net: NetnsRun, _ host: String, _ origin: String) async throws -> [[String: Any]] {
        try await offers(net, host).filter { ($0["device"] as? [String: Any])?["id"] as? String == origin }
    }

    /// b held a's kept offer, then went away; meanwhile a woke, its app ended the activity,
    /// and c kept the withdrawal (across its own restart, with a asleep again): b, back
    /// through c alone, drops what it held. A device removed from the account loses what
    /// was kept for it.
    @Test func aWithdrawalReachesAMemberThroughAKeeperThatRestarted() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            let (idA, idB, idC) = try await members(net)
            let (desktop, logind, standin) = try await sleepyDesktop(net, "a")
            let owner = try await net.spawn("a", log: net.directory + "/a-owner.log", [
                try TestEnvironment.binary("handoffctl"), "--socket", net.socket("a"), "become-current", "--attach",
                "--type", "org.example.edit", "--title", "Notes",
            ])
            try await eventually(10, "b and c to see a's offer") {
                let b = try await self.offersFrom(net, "b", idA).count, c = try await self.offersFrom(net, "c", idA).count
                return b == 1 && c == 1
            }
            // a sleeps: b and c both keep its offer.
            try await sleep(net, standin: standin, logind: logind)
            try await bridgePort(net, "p1", up: false)
            let daemonA = try #require(net.daemons["a"])
            net.stop(daemonA, SIGSTOP)
            for h in ["b", "c"] {
                try await eventually(5, "\(h) to keep a's offer") { try await self.offersFrom(net, h, idA).first?["kept"] as? Bool == true }
            }
            // b goes away; a wakes, links with c, and its app ends the activity.
            try await bridgePort(net, "p2", up: false)
            try await eventually(15, "c to notice b is gone") { try await !net.isConnected("c", to: idB) }
            net.stop(daemonA, SIGCONT)
            try await bridgePort(net, "p1", up: true)
            net.stop(standin, SIGUSR2)
            try await eventually(20, "a and c to link again") { try await net.isConnected("c", to: idA) }
            net.stop(owner, SIGTERM)
            try await eventually(10, "c to list nothing from a") { try await self.offersFrom(net, "c", idA).isEmpty }
            // a sleeps again, offering nothing, and is gone.
            try await sleep(net, standin: standin, logind: logind, times: 2)
            try await bridgePort(net, "p1", up: false)
            net.stop(daemonA, SIGSTOP)
            // c restarts with nobody to learn from: what it keeps (the withdrawal) is on its disk.
            await net.kill("c", SIGTERM)
            _ = try await net.startDaemon("c")
            // b comes back: only c is there, and it hands on the withdrawal.
            try await bridgePort(net, "p2", up: true)
            try await eventually(30, "b to link with c again") { try await net.isConnected("b", to: idC) }
            try await eventually(5, "b to drop a's kept offer") { try await self.offersFrom(net, "b", idA).isEmpty }
            #expect(try await !net.isConnected("b", to: idA))
            let bLog = text(net.logPath("b"))
            #expect(bLog.contains("keeping an offer for a member") && bLog.contains("kind=withdrawn"), "b took the withdrawal from c")

            // Removed from the account: what b kept for a goes (b held nothing now; c forgets too).
            net.stop(daemonA, SIGCONT)
            try await bridgePort(net, "p1", up: true)
            net.stop(standin, SIGUSR2)
            let removed = try await net.ctl("b", "remove", idA)
            #expect(removed.status == 0, "\(removed)")
            try await eventually(10, "c to drop what it kept for a") {
                self.text(net.logPath("c")).contains("dropped what was kept for a device no longer in the account")
            }
            desktop.stop()
            net.stop(standin, SIGTERM)
        }
    }

    /// `become-current --to ws-b`: b lists, continues and keeps it; c, a member too, never
    /// sees it, live or kept, and cannot fetch it by id.
    @Test func anOfferToOneWorkstationReachesItAlone() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            let (idA, _, _) = try await members(net)
            let (desktop, logind, standin) = try await sleepyDesktop(net, "a")
            let unknown = try await net.ctl("a", "become-current", "--type", "org.example.edit", "--to", "ws-nowhere")
            #expect(unknown.status != 0 && unknown.stderr.contains("none of your workstations"), "\(unknown)")
            let made = try await net.ctl("a", "become-current", "--type", "org.example.edit", "--title", "For b", "--to", "ws-b")
            #expect(made.status == 0, "\(made)")
            let id = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let current = try await net.ctl("a", "current")
            #expect(current.stdout.contains("to:       ws-b only"), "\(current)")
            try await eventually(10, "b to list it") { try await self.offersFrom(net, "b", idA).count == 1 }
            // c is linked to a all along: had it been told, it would list it by now.
            #expect(try await self.offersFrom(net, "c", idA).isEmpty)
            let fetched = try await net.ctl("c", "continue", "--id", id)
            #expect(fetched.status != 0, "c cannot continue what was not offered to it: \(fetched)")
            // Sleep: only b keeps it.
            try await sleep(net, standin: standin, logind: logind)
            try await bridgePort(net, "p1", up: false)
            let daemonA = try #require(net.daemons["a"])
            net.stop(daemonA, SIGSTOP)
            try await eventually(15, "b to keep it") { try await self.offersFrom(net, "b", idA).first?["kept"] as? Bool == true }
            #expect(try await self.offersFrom(net, "c", idA).isEmpty, "c neither lists nor keeps it")
            #expect(!text(net.logPath("c")).contains("keeping an offer for a member"), "c was never handed it")
            net.stop(daemonA, SIGCONT)
            desktop.stop()
            net.stop(standin, SIGTERM)
        }
    }

    /// What c keeps is checked again when c starts: an item altered on its disk (a byte of
    /// the payload changed, as a tampering keeper would) is dropped, never handed on.
    @Test func anAlteredKeptOfferIsNeverHandedOn() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            let (idA, idB, idC) = try await members(net)
            let (desktop, logind, standin) = try await sleepyDesktop(net, "a")
            try await bridgePort(net, "p2", up: false)
            try await eventually(15, "a and c to notice b is gone") {
                let a = try await net.isConnected("a", to: idB), c = try await net.isConnected("c", to: idB)
                return !a && !c
            }
            _ = try await net.ctl("a", "become-current", "--type", "org.example.edit", "--title", "Untouched title")
            try await eventually(10, "c to see a's offer") { try await self.offersFrom(net, "c", idA).count == 1 }
            try await sleep(net, standin: standin, logind: logind)
            try await bridgePort(net, "p1", up: false)
            let daemonA = try #require(net.daemons["a"])
            net.stop(daemonA, SIGSTOP)
            let file = net.stateDirectory("c") + "/kept-offers.json"
            try await eventually(5, "c to write what it keeps") { self.text(file).contains("\"items\"") }
            await net.kill("c", SIGTERM)
            // The title, inside the signed payload: "Untouched" becomes "Untouchad".
            let doc = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
            var items = try #require(doc["items"] as? [String])
            var bytes = [UInt8](try #require(Data(base64Encoded: items[0])))
            let needle = Array("Untouched".utf8)
            let at = try #require((0...(bytes.count - needle.count)).first { Array(bytes[$0..<($0 + needle.count)]) == needle })
            bytes[at + 7] = UInt8(ascii: "a")
            items[0] = Data(bytes).base64EncodedString()
            var altered = doc
            altered["items"] = items
            try JSONSerialization.data(withJSONObject: altered).write(to: URL(fileURLWithPath: file))
            _ = try await net.startDaemon("c")
            #expect(text(net.logPath("c")).contains("dropped a kept offer read from disk"), "c refuses what it can no longer verify")
            try await bridgePort(net, "p2", up: true)
            try await eventually(30, "b to link with c again") { try await net.isConnected("b", to: idC) }
            #expect(try await self.offersFrom(net, "b", idA).isEmpty, "b was handed nothing of a's")
            #expect(try await self.offersFrom(net, "c", idA).isEmpty)
            net.stop(daemonA, SIGCONT)
            desktop.stop()
            net.stop(standin, SIGTERM)
        }
    }

    @Test func anOfferSavedBeforeSleepIsContinuedFromAnotherMember() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            let (idA, idB, idC) = try await members(net, ["--will-save-timeout-ms", "2000"])

            // a's graphical session: logind (a stand-in), then the agent, which takes the lock.
            let (desktop, logind, standin) = try await sleepyDesktop(net, "a")
            try await eventually(10, "a's doctor to say sleep is guarded") {
                try await net.ctl("a", "doctor", "--json").stdout.contains("the session agent holds logind's delay lock")
            }

            // b wanders off; a's app makes its activity current, with a payload it refreshes on will-save.
            try await bridgePort(net, "p2", up: false)
            try await eventually(15, "a and c to notice b is gone") {
                let a = try await net.isConnected("a", to: idB), c = try await net.isConnected("c", to: idB)
                return !a && !c
            }
            let owner = try await net.spawn("a", log: net.directory + "/a-owner.log", [
                try TestEnvironment.binary("handoffctl"), "--socket", net.socket("a"), "become-current", "--attach", "--needs-save",
                "--type", "org.example.player", "--title", "Big Buck Bunny", "--info", "position:=1", "--streams",
                "--refresh-with", "echo '{\"position\": 42}'",
            ])
            var offered: String?
            try await eventually(10, "c to see a's offer") {
                offered = try await self.offers(net, "c").first { ($0["device"] as? [String: Any])?["id"] as? String == idA }
                    .flatMap { ($0["activity"] as? [String: Any])?["id"] as? String }
                return offered != nil
            }

            // Sleep: the lock is given back once the offer, saved by its app, went to c.
            net.stop(standin, SIGUSR1)
            do {
                try await eventually(10, "a to let the machine sleep") { self.text(logind).contains("asleep after") }
            } catch {
                throw TestFailure("\(error)\n--- logind stand-in ---\n\(text(logind))\n--- a's agent ---\n\(desktop.log)")
            }
            let slept = text(logind)
            #expect(slept.contains("every lock given back"), "the agent gave the lock back, not the delay running out:\n\(slept)")
            #expect(text(desktop.agentLog).contains("going to sleep"), "\(desktop.log)")
            // Frozen and off the network, as a closed lid is.
            try await bridgePort(net, "p1", up: false)
            let daemonA = try #require(net.daemons["a"])
            net.stop(daemonA, SIGSTOP)
            try await eventually(5, "c to show a's offer as kept") {
                try await self.offers(net, "c").contains { $0["kept"] as? Bool == true && ($0["activity"] as? [String: Any])?["id"] as? String == offered }
            }

            // b comes back: it links with c only, and finds a's offer there.
            try await bridgePort(net, "p2", up: true)
            try await eventually(30, "b to link with c again") { try await net.isConnected("b", to: idC) }
            try await eventually(5, "b to list a's kept offer") {
                try await self.offers(net, "b").contains { $0["kept"] as? Bool == true && ($0["activity"] as? [String: Any])?["id"] as? String == offered }
            }
            let listed = try await net.ctl("b", "list")
            #expect(listed.stdout.contains("origin asleep, kept here") && listed.stdout.contains("ws-a"), "\(listed)")
            let continued = try await net.ctl("b", "continue", "--json")
            #expect(continued.status == 0, "\(continued)")
            let o = try JSONSerialization.jsonObject(with: Data(continued.stdout.utf8)) as? [String: Any] ?? [:]
            #expect(o["id"] as? String == offered, "\(o)")
            #expect((o["userInfo"] as? [String: Any])?["position"] as? Int == 42, "the payload a's app saved before sleep: \(o)")
            #expect(o["stale"] as? Bool == false, "\(o)")
            #expect((o["device"] as? [String: Any])?["name"] as? String == "ws-a", "\(o)")
            // Its streams need a: said plainly.
            let stream = try await net.ctl("b", "continue", "--stream-to", "/dev/null")
            #expect(stream.status != 0 && stream.stderr.contains("wake it"), "\(stream)")

            // a wakes: it links again at once, and its offer is one offer everywhere.
            net.stop(daemonA, SIGCONT)
            try await bridgePort(net, "p1", up: true)
            net.stop(standin, SIGUSR2)
            try await eventually(20, "a and b to link again") { try await net.isConnected("b", to: idA) }
            for h in ["b", "c"] {
                try await eventually(5, "\(h) to list a's offer once, live") {
                    let fromA = try await self.offers(net, h).filter { ($0["device"] as? [String: Any])?["id"] as? String == idA }
                    return fromA.count == 1 && fromA[0]["kept"] == nil
                }
            }
            // What c keeps for a (hidden behind a's live offer now) goes when asked.
            let forgot = try await net.ctl("c", "forget", "ws-a")
            #expect(forgot.status == 0 && forgot.stdout.contains("forgot what was kept for 1 workstation"), "\(forgot)")
            let again = try await net.ctl("c", "forget")
            #expect(again.status == 0 && again.stdout.contains("nothing kept here"), "\(again)")
            net.stop(owner, SIGTERM)
            desktop.stop()
            net.stop(standin, SIGTERM)
        }
    }

    /// A member gone bad: its certificate and key in a program that writes kept items by
    /// hand from PeerProtocol.md §18 (Tests/Fixtures/hostile-keeper, Python, no handoff
    /// code). Every message that breaks a rule is refused with an error frame and a log
    /// line, and nothing in it is kept; an honest item from the same program is kept, so
    /// the refusals are for what each case breaks. A copy of an older item is ignored, not
    /// refused: members' copies cross on the way.
    @Test func aHostileKeeperIsRefusedAndNothingItSentIsKept() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            let pidA = try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pairByCode("a", "b")
            let idB = try await net.deviceID("b")
            // b's daemon stops; its key is the hostile program's now.
            await net.kill("b", SIGTERM)
            try await eventually(15, "a to see b gone") { try await !net.isConnected("a", to: idB) }
            let address = try await net.address("a"), port = try net.peerPort("a")
            let keeper = TestEnvironment.packageRoot + "/Tests/Fixtures/hostile-keeper"
            let activityID = String((0..<32).map { _ in "0123456789abcdef".randomElement()! })
            func send(_ which: String, _ extra: [String] = []) async throws -> [String: Any] {
                let r = try await net.exec("b", ["/usr/bin/python3", keeper, address, String(port),
                                                 "--cert", net.stateDirectory("b") + "/device-cert.pem",
                                                 "--key", net.stateDirectory("b") + "/device-key.pem",
                                                 "--case", which, "--activity-id", activityID, "--title", "Honest"] + extra)
                #expect(r.status == 0, "\(which): \(r)")
                return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
            }
            func titlesKeptFromB() async throws -> [String] {
                try await offersFrom(net, "a", idB).compactMap { ($0["activity"] as? [String: Any])?["title"] as? String }
            }
            func log() -> String { text(net.logPath("a")) }

            let refusals: [(String, String)] = [
                ("bad-signature", "bad-kept-offer"), ("altered", "bad-kept-offer"), ("unsigned", "bad-kept-offer"),
                ("not-for-you", "bad-kept-offer"), ("mixed", "bad-kept-offer"), ("many-items", "malformed"),
                ("long-index", "malformed"), ("oversized", "frame-too-large"),
            ]
            for (which, code) in refusals {
                let before = log().utf8.count
                let answer = try await send(which)
                #expect(answer["error"] as? String == code && answer["closed"] as? Bool == true, "\(which): \(answer)")
                #expect(try await titlesKeptFromB().isEmpty, "\(which): nothing it sent is kept")
                let said = String(decoding: log().utf8.dropFirst(before), as: UTF8.self)
                #expect(said.contains(code == "bad-kept-offer" ? "refused a kept offer" : code), "\(which): a log line says why:\n\(said)")
            }

            // The control: an honest item, written by the same program, is kept.
            let honest = try await send("honest")
            #expect(honest["error"] is NSNull && honest["closed"] as? Bool == false, "\(honest)")
            let sequence = try #require(honest["sequence"] as? Int)
            try await eventually(5, "a to list the honest item as kept") { try await titlesKeptFromB() == ["Honest"] }

            // An older copy: ignored, the link stays. Other bytes under the same sequence: refused.
            let replay = try await send("replay", ["--sequence", String(sequence)])
            #expect(replay["error"] is NSNull && replay["closed"] as? Bool == false, "\(replay)")
            let equivocation = try await send("equivocation", ["--sequence", String(sequence)])
            #expect(equivocation["error"] as? String == "bad-kept-offer" && equivocation["closed"] as? Bool == true, "\(equivocation)")
            #expect(try await titlesKeptFromB() == ["Honest"], "the item held is the honest one")
            #expect(access("/proc/\(pidA)", F_OK) == 0 && !log().contains("Fatal error"), "handoffd on a survived")
            #expect(try await net.ctl("a", "status").status == 0)
        }
    }

    /// handoffd on HOST is told the machine sleeps (what the agent does on logind's
    /// PrepareForSleep): its answer.
    func prepareForSleep(_ net: NetnsRun, _ host: String) async throws -> [String: Any] {
        let r = try await net.exec(host, ["curl", "-s", "--unix-socket", net.socket(host), "-X", "POST", "-H", "Content-Type: application/json",
                                          "-d", "{\"phase\": \"prepare\"}", "http://localhost/v1/sleep"])
        return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? ["curl": "\(r)"]
    }

    /// a sleeps as a closed lid does: told, then frozen and off the network.
    func closeTheLid(_ net: NetnsRun, handedTo: Int) async throws {
        let slept = try await prepareForSleep(net, "a")
        #expect(slept["offered"] as? Bool == true && slept["handedTo"] as? Int == handedTo, "\(slept)")
        net.stop(try #require(net.daemons["a"]), SIGSTOP)
        try await bridgePort(net, "p1", up: false)
    }

    /// An offer kept for a sleeping workstation goes when it expires: no longer listed or
    /// continued, not handed to a member that links afterwards, not back after a restart.
    @Test func aKeptOfferThatExpiredIsNeverShown() async throws {
        try await NetnsRun.with(["a", "b", "c"]) { net in
            let (idA, idB, idC) = try await members(net)
            try await bridgePort(net, "p3", up: false)
            try await eventually(15, "a and b to notice c is gone") {
                let a = try await net.isConnected("a", to: idC), b = try await net.isConnected("b", to: idC)
                return !a && !b
            }
            _ = try await net.ctl("a", "become-current", "--type", "org.example.brief", "--title", "Brief", "--expires", "12s")
            try await eventually(10, "b to see a's offer") { try await !self.offersFrom(net, "b", idA).isEmpty }
            try await closeTheLid(net, handedTo: 1)
            try await eventually(5, "b to list it as kept") { try await self.offersFrom(net, "b", idA).first?["kept"] as? Bool == true }

            try await eventually(20, "b to drop it when it expires") { try await self.offersFrom(net, "b", idA).isEmpty }
            let continued = try await net.ctl("b", "continue")
            #expect(continued.status != 0, "\(continued)")
            #expect(!(try await net.ctl("b", "list")).stdout.contains("Brief"))

            // c comes back and links with b: nothing of a's is handed to it.
            try await bridgePort(net, "p3", up: true)
            try await eventually(30, "c to link with b again") { try await net.isConnected("c", to: idB) }
            // 2 s: kept offers are handed on at once when a link comes up (the tests above).
            try await never(within: 2, because: "b handed a's expired offer on to c") { !(try await offersFrom(net, "c", idA).isEmpty) }
            #expect(!text(net.logPath("c")).contains("keeping an offer for a member"))

            // b restarts: what it keeps is read again, and the expired offer is not among it.
            await net.kill("b", SIGTERM)
            try await net.startDaemon("b")
            try await never(within: 1, because: "b read a's expired offer back from what it keeps") { !(try await offersFrom(net, "b", idA).isEmpty) }
        }
    }

    /// A document in a synced folder, offered by a workstation that then slept, opens on
    /// another from its own copy of the folder. Without a copy here, it is said plainly
    /// that the copy would come from the sleeping workstation: wake it.
    @Test func aKeptDocumentOpensFromTheSyncedFolderHere() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            let docs = DocumentHandoffTests()
            let syncA = net.directory + "/a/Sync", syncB = net.directory + "/b/Elsewhere/SyncB"
            try docs.write(docs.syncthingConfig(syncA), net.directory + "/a/state/syncthing/config.xml")
            try docs.write(docs.syncthingConfig(syncB), net.directory + "/b/state/syncthing/config.xml")
            try docs.write("milk\neggs\n", syncA + "/notes/list.txt")
            try docs.write("milk\neggs\n", syncB + "/notes/list.txt")
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let idA = try await net.deviceID("a")
            let desk = try await docs.editorDesktop(net, "b")
            defer { desk.stop() }

            _ = try await net.offer(from: "a", to: "b", ["--type", "org.example.viewer.view", "--title", "List", "--document", syncA + "/notes/list.txt"])
            try await closeTheLid(net, handedTo: 1)
            try await eventually(5, "b to list a's offer as kept") { try await self.offersFrom(net, "b", idA).first?["kept"] as? Bool == true }

            let opened = try await net.ctl("b", "continue")
            #expect(opened.status == 0 && opened.stdout.contains("your own copy in the synced folder"), "\(opened)\n\(desk.log)")
            let record = try await desk.waitForRecord("editor")
            let uri = (record["argv"] as? [String])?.first ?? ""
            #expect((URL(string: uri)?.path ?? uri) == syncB + "/notes/list.txt", "\(record)")

            // No copy here: it would come from a, which sleeps.
            try FileManager.default.removeItem(atPath: syncB + "/notes/list.txt")
            let missing = try await net.ctl("b", "continue")
            #expect(missing.status != 0 && missing.stderr.contains("could not fetch the document") && missing.stderr.contains("(ws-a)")
                    && missing.stderr.contains("wake it"), "\(missing)")
        }
    }
}
}
