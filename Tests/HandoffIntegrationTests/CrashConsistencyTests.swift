import Foundation
import HandoffClient
import HandoffCore
import HandoffControlAPI
import HandoffTestSupport
import Testing

/// handoffd killed with SIGKILL (its history helper with it) at random moments of a stream
/// of acknowledged writes, and started again each time, over a thousand writes and more:
/// every state file still parses, nothing is kept aside as unreadable, and every write that
/// got its 2xx is there after the restart (a write in flight at the kill may or may not be).
@Suite(.serialized)
struct CrashConsistencyTests {
    /// What the writers had acknowledged when the daemon was killed.
    final class Acknowledged: @unchecked Sendable {
        private let lock = NSLock()
        private var _killed = false
        /// The newest acknowledged activity: its sequence number and id, and whether its
        /// title change was acknowledged too.
        var activity: (seq: Int, id: String, updated: Bool)?
        var trusted: [String: String] = [:]
        var untrusted: Set<String> = []
        var state: [String: Int] = [:]
        var writes = 0
        /// Changes refused because the disk is full (allowed only where the test fills it).
        var refusals = 0
        var refusalsAllowed = false
        var unexpected: [String] = []

        var killed: Bool { lock.withLock { _killed } }
        func kill() { lock.withLock { _killed = true } }
        func with<T>(_ body: (Acknowledged) -> T) -> T { lock.withLock { body(self) } }
        /// A failure before the kill is a bug; after it, the expected end of the writer.
        /// Returns whether the writer goes on: after a refusal for a full disk where that is
        /// allowed.
        func failed(_ what: String, _ error: any Error) -> Bool {
            lock.withLock {
                if _killed { return false }
                if refusalsAllowed, case HandoffClientError.api(let e) = error,
                   e.status == 507 || (e.status == 500 && e.message.contains("could not be saved")) {
                    refusals += 1
                    return true
                }
                unexpected.append("\(what): \(error)")
                return false
            }
        }
    }

    static let apps = ["org.example.CrashEditor", "org.example.CrashViewer"]

    /// Writes until the daemon dies: activities (new ones, half of them searchable so that
    /// the history helper writes too, and title changes), trusted devices (added, and some
    /// removed again), restoration state (two apps).
    func write(_ client: HandoffClient, _ ack: Acknowledged, startingAt seq: Int) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var n = seq
                while !ack.killed {
                    n += 1
                    var draft = ActivityDraft(activityType: "org.example.crash")
                    draft.title = "a\(n)"
                    draft.eligibleForSearch = n % 2 == 0
                    draft.persistentIdentifier = "p\(n)"
                    do {
                        let made = try await client.becomeCurrent(draft)
                        ack.with { $0.activity = (n, made.activity.id.rawValue, false); $0.writes += 1 }
                        var change = ActivityUpdate()
                        change.title = "a\(n) changed"
                        _ = try await client.update(made.activity.id.rawValue, change)
                        ack.with { $0.activity = (n, made.activity.id.rawValue, true); $0.writes += 1 }
                    } catch { if !ack.failed("activity \(n)", error) { return } }
                }
            }
            group.addTask {
                var n = seq
                while !ack.killed {
                    n += 1
                    let id = DeviceID(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) }).description
                    do {
                        _ = try await client.trust(id, name: "t\(n)")
                        ack.with { $0.trusted[id] = "t\(n)"; $0.writes += 1 }
                        if n % 3 == 0 {
                            // In flight, the device may be trusted or not after a kill.
                            ack.with { $0.trusted[id] = nil }
                            _ = try await client.untrust(id)
                            ack.with { $0.untrusted.insert(id); $0.writes += 1 }
                        }
                    } catch { if !ack.failed("trust \(n)", error) { return } }
                }
            }
            group.addTask {
                var n = seq
                while !ack.killed {
                    n += 1
                    let app = Self.apps[n % 2]
                    do {
                        try await client.saveState(app: app, version: "v\(n)", entries: ["Doc/Cursor": .integer(Int64(n))])
                        ack.with { $0.state[app] = n; $0.writes += 1 }
                    } catch { if !ack.failed("state \(n)", error) { return } }
                }
            }
        }
    }

    /// The processes whose parent is `pid` (handoffd's history helper).
    static func children(of pid: Int32) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }.filter { child in
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid
        }
    }

    /// Every JSON state file parses; nothing was kept aside as unreadable; no temporary
    /// file of a dead daemon is left once it started again.
    func checkFiles(_ daemon: DaemonProcess) throws -> Int {
        let state = daemon.stateDirectory
        let names = FileManager.default.subpaths(atPath: state) ?? []
        let aside = names.filter { $0.contains(".unreadable") }
        #expect(aside.isEmpty, "kept aside: \(aside)\n\(daemon.log().split(separator: "\n").filter { $0.contains("could not") }.joined(separator: "\n"))")
        var parsed = 0
        for name in names where name.hasSuffix(".json") {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: state + "/" + name)))
            #expect(throws: Never.self, "\(name) does not parse") { _ = try JSONValue(parsing: bytes) }
            parsed += 1
        }
        return parsed
    }

    /// The state folder is the user's alone (0700) and every file in it is 0600: the
    /// device key, the trust, the account, the history, the activities (Security.md 3.2);
    /// only the device's certificate, which is public, may be read by others.
    /// (The tests run under the usual umask 022, which alone would leave them readable.)
    func checkPrivate(_ daemon: DaemonProcess) throws -> Int {
        var st = stat()
        try #require(lstat(daemon.stateDirectory, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o700, "the state folder is \(String(st.st_mode & 0o777, radix: 8))")
        var checked = 0
        for name in FileManager.default.subpaths(atPath: daemon.stateDirectory) ?? [] {
            guard lstat(daemon.stateDirectory + "/" + name, &st) == 0 else { continue }  // a file being replaced
            let mode = st.st_mode & 0o777
            if (st.st_mode & S_IFMT) == S_IFDIR {
                #expect(mode == 0o700, "\(name) is \(String(mode, radix: 8))")
            } else if name == "device-cert.pem" {
                // Public: every TLS client is sent it. Nothing else here is.
                #expect(mode & 0o133 == 0, "\(name) is \(String(mode, radix: 8))")
            } else {
                #expect(mode == 0o600, "\(name) is \(String(mode, radix: 8))")
            }
            checked += 1
        }
        return checked
    }

    /// The history database passes SQLite's own integrity check. A round killed before the
    /// helper's first write leaves none, so it must be there only when `required` (after
    /// all the rounds).
    func checkHistory(_ daemon: DaemonProcess, required: Bool = false) async throws {
        let db = daemon.stateDirectory + "/history.sqlite"
        guard FileManager.default.fileExists(atPath: db) else {
            if required { Issue.record("no history.sqlite in \(daemon.stateDirectory) after all the rounds") }
            return
        }
        let r = try await CommandLineTool.run("/usr/bin/python3", ["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('pragma integrity_check').fetchone()[0])", db],
                                              environment: daemon.environment)
        #expect(r.status == 0 && r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", "history.sqlite: \(r)")
    }

    /// What the rounds found, in total.
    struct Tally {
        var kills = 0, writes = 0, refusals = 0, files = 0
        var lost: [String] = []
    }

    /// One round: start the daemon, write until a random moment, kill it (and its helper),
    /// start it again and check that the files parse and the acknowledged writes are there.
    /// `expected` carries what the previous rounds left.
    func round(_ daemon: DaemonProcess, _ client: HandoffClient, _ expected: inout Acknowledged, _ rng: inout SplitMix, _ seq: Int,
               _ tally: inout Tally, refusalsAllowed: Bool = false) async throws {
        try await daemon.start()
        let ack = Acknowledged()
        ack.refusalsAllowed = refusalsAllowed
        ack.trusted = expected.trusted
        ack.untrusted = expected.untrusted
        ack.state = expected.state
        ack.activity = expected.activity
        let writers = Task { await write(client, ack, startingAt: seq) }
        // Mostly early (a daemon that just started, or is still loading), sometimes late.
        let delay = Double(rng.next() % 1000) / 1000
        try await Task.sleep(for: .milliseconds(Int(delay * delay * 400)))
        let helpers = Self.children(of: daemon.pid)
        ack.kill()
        daemon.signal(SIGKILL)
        for h in helpers { kill(h, SIGKILL) }
        await daemon.crash()
        await writers.value
        tally.kills += 1
        #expect(ack.unexpected.isEmpty, "writes failed before the kill: \(ack.unexpected)")
        tally.writes += ack.with { $0.writes }
        tally.refusals += ack.with { $0.refusals }

        try await daemon.start()
        tally.files += try checkFiles(daemon)
        try await checkHistory(daemon)
        #expect(!daemon.log().contains("could not be read"), "round \(tally.kills): \(daemon.log())")
        // Activities: the newest acknowledged one (or a newer one) is current, with its
        // acknowledged title.
        if let newest = ack.activity {
            let current = try await client.current()
            let title = current?.activity.title ?? ""
            let currentSeq = Int(title.dropFirst().prefix { $0.isNumber }) ?? -1
            if currentSeq < newest.seq { tally.lost.append("activity \(newest.seq) (current is \(title))") }
            if currentSeq == newest.seq && newest.updated && !title.hasSuffix("changed") { tally.lost.append("the title change of activity \(newest.seq)") }
        }
        // Trust: every acknowledged device is trusted, with its name; every acknowledged
        // removal stays removed.
        let peers = try await client.peers()
        let trustedNow = Dictionary(peers.filter(\.trusted).compactMap { p in p.id.map { ($0, p.name) } }, uniquingKeysWith: { a, _ in a })
        let trustFile = (try? String(contentsOfFile: daemon.stateDirectory + "/trusted-devices.json", encoding: .utf8)) ?? ""
        for (id, name) in ack.trusted where trustedNow[id] != name {
            tally.lost.append("trust of \(id) (\(name); round \(tally.kills), \(expected.trusted[id] == nil ? "acknowledged in this round" : "present after the last one"), listed as \(trustedNow[id] ?? "nothing"), \(trustFile.contains(id) ? "in" : "not in") the file)")
        }
        for id in ack.untrusted where trustedNow[id] != nil { tally.lost.append("removal of \(id)") }
        // Restoration: each app's newest acknowledged state (or a newer one).
        let saved = try await client.listState()
        for (app, n) in ack.state {
            let version = saved.first { $0.app == app }?.version ?? ""
            if (Int(version.dropFirst()) ?? -1) < n { tally.lost.append("state \(n) of \(app) (saved: \(version))") }
        }
        // The next round expects what is there now (including what was in flight).
        expected = Acknowledged()
        expected.trusted = trustedNow
        expected.untrusted = ack.untrusted.subtracting(trustedNow.keys)
        expected.state = Dictionary(saved.compactMap { s in Int(s.version.dropFirst()).map { (s.app, $0) } }, uniquingKeysWith: max)
        await daemon.stop()
    }

    static func seed() -> UInt64 {
        ProcessInfo.processInfo.environment["HANDOFF_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
    }

    @Test func killedAtRandomMomentsItLosesNoAcknowledgedWrite() async throws {
        let daemon = try DaemonProcess()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let seed = Self.seed()
        var rng = SplitMix(seed)
        var tally = Tally()
        var expected = Acknowledged()
        // Until at least 1,000 acknowledged writes, and at least 40 kills.
        while tally.writes < 1000 || tally.kills < 40 {
            try await round(daemon, client, &expected, &rng, tally.kills * 100_000, &tally)
        }
        try await daemon.start()
        let names = try checkPrivate(daemon)
        for f in ["device-key.pem", "trusted-devices.json", "history.sqlite"] {
            #expect(FileManager.default.fileExists(atPath: daemon.stateDirectory + "/" + f), "\(f) missing; checked \(names) files")
        }
        try await checkHistory(daemon, required: true)
        await daemon.stop()
        print("crash consistency (seed \(seed)): \(tally.kills) kills, \(tally.writes) acknowledged writes, \(tally.files) state files parsed, \(tally.lost.count) lost")
        #expect(tally.lost.isEmpty, "lost after a kill: \(tally.lost)")
    }

    /// The same on a small tmpfs (4 MiB, all but 400 KiB taken by a filler file) that
    /// fills up as the trusted devices and the history accumulate: once
    /// full, changes are refused with 507 (not acknowledged, so not expected), killed and
    /// restarted at random moments meanwhile; the doctor says the disk is full; nothing is
    /// lost or damaged; and once there is room again every change is saved.
    @Test(.enabled(if: getuid() == 0, "needs root to mount a small tmpfs"))
    func aDiskThatFillsUpMeanwhileRefusesButLosesAndDamagesNothing() async throws {
        let daemon = try DaemonProcess()
        let state = daemon.stateDirectory
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let mount = try await CommandLineTool.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4096k,mode=0700", "tmpfs", state],
                                                  environment: ProcessInfo.processInfo.environment)
        try #require(mount.status == 0, "mount: \(mount)")
        // Unmounted on every way out, there and then (a task started in `defer` may not
        // run before the test process ends, and the mount stayed behind).
        defer { _ = Glibc.umount2(state, Int32(MNT_DETACH)) }
        // Room for a few dozen saves of the growing trust file, and the history's database.
        let filler = state + "/filler"
        let fill = try await CommandLineTool.run("/bin/sh", ["-c", "head -c $((4096 * 1024 - 400 * 1024)) /dev/zero > '\(filler)'"],
                                                 environment: ProcessInfo.processInfo.environment)
        try #require(fill.status == 0, "\(fill)")
        let client = HandoffClient(socketPath: daemon.socketPath)
        let seed = Self.seed()
        var rng = SplitMix(seed)
        var tally = Tally()
        var expected = Acknowledged()
        var sawFull = false
        while tally.kills < 40 || !sawFull {
            try await round(daemon, client, &expected, &rng, tally.kills * 100_000, &tally, refusalsAllowed: true)
            if tally.refusals > 0 && !sawFull {
                try await daemon.start()
                let space = try #require(try await client.diagnostics().first { $0.id == "state-space" })
                #expect(space.status == .failed && space.detail.contains("is full"), "\(space)")
                await daemon.stop()
                sawFull = true
            }
            try #require(tally.kills < 400, "the disk never filled: \(tally)")
        }
        // Room again: every change is saved, and is there after a kill.
        try FileManager.default.removeItem(atPath: filler)
        var after = Tally()
        for _ in 0..<5 { try await round(daemon, client, &expected, &rng, 90_000_000 + after.kills * 100_000, &after) }
        #expect(after.refusals == 0 && after.writes > 0, "\(after)")
        try await daemon.start()
        let space = try await client.diagnostics().first { $0.id == "state-space" }
        #expect(space?.status == .ok, "\(String(describing: space))")
        await daemon.stop()
        print("crash consistency on a filling disk (seed \(seed)): \(tally.kills) kills, \(tally.writes) acknowledged writes, \(tally.refusals) refused with 507, \(tally.files) state files parsed, \(tally.lost.count) lost; after freeing space \(after.writes) writes, \(after.lost.count) lost")
        #expect(tally.lost.isEmpty && after.lost.isEmpty, "lost after a kill: \(tally.lost + after.lost)")
    }
}

/// A small seeded generator, so that a failing run's kill moments can be asked for again
/// (`HANDOFF_CRASH_SEED`).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
