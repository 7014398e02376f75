import Foundation
import HandoffClient
import HandoffCore
import HandoffControlAPI
import HandoffTestSupport
import Testing

/// The state directory going wrong under a real handoffd: a full file system (a small
/// tmpfs, root only), and every state file truncated or emptied while the daemon was down
/// (a crash on a file system that does not order data before metadata, a bad restore).
@Suite(.serialized, .enabled(if: getuid() == 0, "needs root to mount a small tmpfs"))
struct StateFaultTests {
    func mountSmallTmpfs(_ path: String, kilobytes: Int) async throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let r = try await CommandLineTool.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k,mode=0700", "tmpfs", path],
                                              environment: ProcessInfo.processInfo.environment)
        guard r.status == 0 else { throw TestFailure("mount: \(r)") }
    }

    func unmount(_ path: String) async {
        _ = try? await CommandLineTool.run("/bin/umount", ["-l", path], environment: ProcessInfo.processInfo.environment)
    }

    /// Fills the file system holding `directory` until a write fails.
    func fill(_ directory: String) async throws {
        _ = try await CommandLineTool.run("/bin/sh", ["-c", "cat /dev/zero > '\(directory)/filler'"], environment: ProcessInfo.processInfo.environment)
        let left = try await CommandLineTool.run("/bin/sh", ["-c", "head -c 1024 /dev/zero > '\(directory)/filler2'"],
                                                 environment: ProcessInfo.processInfo.environment)
        guard left.status != 0 else { throw TestFailure("the file system is not full") }
    }

    func savedTypes(_ daemon: DaemonProcess) throws -> [String] {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: daemon.stateDirectory + "/activities.json")))
        let doc = try JSONValue(parsing: bytes)
        return doc.objectValue?["activities"]?.arrayValue?.compactMap { $0.objectValue?["activityType"]?.stringValue } ?? []
    }

    func apiError(_ body: () async throws -> Void) async -> APIError? {
        do { try await body() } catch HandoffClientError.api(let e) { return e } catch { return nil }
        return nil
    }

    @Test func aFullStateDirectoryRefusesWhatMustBeSavedAndHarmsNothing() async throws {
        let daemon = try DaemonProcess()
        try await mountSmallTmpfs(daemon.stateDirectory, kilobytes: 4096)
        defer { Task { await unmount(daemon.stateDirectory) } }
        try await daemon.start()
        defer { Task { await daemon.stop() } }
        let client = HandoffClient(socketPath: daemon.socketPath)
        var kept = ActivityDraft(activityType: "org.example.kept")
        kept.title = "Saved before the disk filled"
        let before = try await client.becomeCurrent(kept)
        try await client.saveState(app: "org.example.Editor", version: "1", entries: ["cursor": .integer(7)])
        try await fill(daemon.stateDirectory)

        // Making an activity current is refused, with what happened and what to do.
        let refused = await apiError { _ = try await client.becomeCurrent(ActivityDraft(activityType: "org.example.lost")) }
        #expect(refused?.status == 507 && refused?.code == "not_saved", "\(String(describing: refused))")
        #expect(refused?.message.contains("No space left on device") == true, "\(String(describing: refused))")
        #expect(refused?.message.contains("free some space") == true)
        // The CLI says the same and fails.
        let cli = try await CommandLineTool.run(try TestEnvironment.binary("handoffctl"), ["--socket", daemon.socketPath, "become-current", "--type", "org.example.cli"],
                                                environment: daemon.environment)
        #expect(cli.status == 1 && cli.stderr.contains("could not save the activity"), "\(cli)")
        // An update of a saved activity, and restoration state, too.
        var change = ActivityUpdate()
        change.title = "Changed"
        let updateRefused = await apiError { _ = try await client.update(before.activity.id.rawValue, change) }
        #expect(updateRefused?.code == "not_saved")
        let stateRefused = await apiError { try await client.saveState(app: "org.example.Editor", version: "1", entries: ["cursor": .integer(8)]) }
        #expect(stateRefused?.status == 507 && stateRefused?.code == "not_saved", "\(String(describing: stateRefused))")

        // Nothing changed: in memory, and on disk.
        #expect(try await client.current()?.activity == before.activity)
        #expect(try savedTypes(daemon) == ["org.example.kept"])
        // The saved state is still given to a launching app (its launch is tracked in memory).
        #expect(try await client.restoreState(app: "org.example.Editor", version: "1").state == ["cursor": .integer(7)])
        try await client.stateRestored(app: "org.example.Editor")
        // An app's own activity needs no saving (it ends with the app): it still works.
        let session = try await client.openSession()
        _ = try await client.becomeCurrent(ActivityDraft(activityType: "org.example.app"), session: session.token)
        session.close()
        // The doctor names the cause.
        let space = try #require(try await client.diagnostics().first { $0.id == "state-space" })
        #expect(space.status == .failed && space.detail.contains("is full"), "\(space)")

        // Room again: the same request works, and survives a crash.
        try FileManager.default.removeItem(atPath: daemon.stateDirectory + "/filler")
        let later = try await client.becomeCurrent(ActivityDraft(activityType: "org.example.later"))
        #expect(try await client.diagnostics().first { $0.id == "state-space" }?.status == .ok)
        await daemon.crash()
        try await daemon.start()
        #expect(try await client.current()?.activity.id == later.activity.id)
        #expect(try await client.activity(before.activity.id.rawValue).state == .resigned)
        #expect(!daemon.log().contains("kept aside"), "a full disk damaged a file:\n\(daemon.log())")
    }

    /// Every state file, cut to half or to nothing while handoffd was down: it starts,
    /// keeps each damaged file aside, logs it, reports it, and works.
    @Test(arguments: ["half", "empty"])
    func damagedStateFilesAtStartAreKeptAsideAndRecoveredFrom(_ cut: String) async throws {
        let other = try await DaemonProcess().start()
        let otherID = try await HandoffClient(socketPath: other.socketPath).identity().deviceID
        await other.stop()

        let daemon = try await DaemonProcess().start()
        defer { Task { await daemon.stop() } }
        let client = HandoffClient(socketPath: daemon.socketPath)
        let oldID = try await client.identity().deviceID
        _ = try await client.trust(otherID, name: "other")
        var one = ActivityDraft(activityType: "org.example.one")
        one.eligibleForSearch = true
        _ = try await client.becomeCurrent(one)
        _ = try await client.becomeCurrent(ActivityDraft(activityType: "org.example.two"))
        try await client.saveState(app: "org.example.Editor", version: "1", entries: ["cursor": .integer(7)])
        #expect(await daemon.stop() == 0)

        let state = daemon.stateDirectory
        let files = try FileManager.default.subpathsOfDirectory(atPath: state).filter {
            var dir: ObjCBool = false
            return FileManager.default.fileExists(atPath: state + "/" + $0, isDirectory: &dir) && !dir.boolValue
        }
        for name in ["activities.json", "trusted-devices.json", "device-cert.pem", "device-key.pem", "history.sqlite",
                     "restoration/org.example.Editor.json"] {
            #expect(files.contains(name), "\(name) was not made (\(files))")
        }
        for name in files {
            let path = state + "/" + name
            let size = try (FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
            #expect(truncate(path, off_t(cut == "half" ? size / 2 : 0)) == 0)
        }

        try await daemon.start()
        let log = daemon.log()
        // A new identity (the old one cannot be used), said loudly.
        let newID = try await client.identity().deviceID
        #expect(newID != oldID)
        #expect(log.contains("a new one was made"), "\(log)")
        let checks = try await client.diagnostics()
        let identity = try #require(checks.first { $0.id == "identity" })
        #expect(identity.status == .warning && identity.fix?.contains("pair") == true, "\(identity)")
        // Each damaged file is kept aside, not overwritten, and listed by the doctor.
        let aside = try #require(checks.first { $0.id == "state-files" })
        #expect(aside.status == .warning, "\(aside)")
        for name in ["activities.json", "trusted-devices.json", "device-cert.pem", "device-key.pem", "restoration/org.example.Editor.json"] {
            #expect(aside.detail.contains(name + ".unreadable"), "\(name) not kept aside: \(aside.detail)")
        }
        // And handoffd works: activities, trust, state, history.
        _ = try await client.becomeCurrent(ActivityDraft(activityType: "org.example.after"))
        _ = try await client.trust(otherID, name: "other")
        #expect(try await client.peers().contains { $0.id == otherID && $0.trusted })
        try await client.saveState(app: "org.example.Editor", version: "1", entries: ["cursor": .integer(9)])
        _ = try await client.history(HistoryQuery(text: "one"))
        // And it stays so across another restart, with nothing more kept aside.
        #expect(await daemon.stop() == 0)
        try await daemon.start()
        #expect(try await client.identity().deviceID == newID)
        #expect(try await client.current()?.activity.activityType == "org.example.after")
        #expect(try await client.diagnostics().first { $0.id == "identity" }?.status == .ok)
    }

    /// A daemon killed between writing a state file's temporary copy and renaming it
    /// leaves the copy behind; the next start removes it (a live process's are left alone).
    @Test func whatAnInterruptedSaveLeftBehindIsRemovedAtStart() async throws {
        let daemon = try DaemonProcess()
        let fm = FileManager.default
        try fm.createDirectory(atPath: daemon.stateDirectory + "/restoration", withIntermediateDirectories: true)
        let dead = "2147483646"  // above any pid_max: no such process
        let left = ["activities.json.tmp-\(dead)-3", "trusted-devices.json.tmp-\(dead)", "kept-offers.json.tmp-\(dead)-2",
                    "restoration/org.example.Editor.json.tmp-\(dead)-1"]
        let alive = "activities.json.tmp-\(getpid())-9"
        // Not handoffd's: another program's file, though its name looks like one.
        let others = ["notes.tmp-keep", "backup.tmp-2024-01-05", "activities.json.tmp-\(dead)-3-1"]
        for name in left + [alive] + others {
            #expect(fm.createFile(atPath: daemon.stateDirectory + "/" + name, contents: Data("{".utf8)))
        }
        try await daemon.start()
        defer { Task { await daemon.stop() } }
        for name in left { #expect(!fm.fileExists(atPath: daemon.stateDirectory + "/" + name), "\(name) is still there") }
        #expect(fm.fileExists(atPath: daemon.stateDirectory + "/" + alive))
        for name in others { #expect(fm.fileExists(atPath: daemon.stateDirectory + "/" + name), "\(name) was removed") }
        #expect(daemon.log().contains("removed what an interrupted save left behind"), "\(daemon.log())")
        _ = try await HandoffClient(socketPath: daemon.socketPath).becomeCurrent(ActivityDraft(activityType: "org.example.after"))
        #expect(try savedTypes(daemon) == ["org.example.after"])
    }

    struct SlowFS {
        let process: Process
        let backing: String
        /// While it exists, fsync waits.
        let stall: String
        /// While it exists, a file's fsync fails with EIO.
        let fail: String
        /// While it exists, every call of the file system waits.
        let hang: String
    }

    /// Runs `body` with `scripts/dev/slowfs` mounted as the daemon's state directory, then stops
    /// the daemon, unmounts and ends slowfs, whatever `body` did.
    func withSlowFS(_ daemon: DaemonProcess, _ body: (SlowFS) async throws -> Void) async throws {
        let fs = SlowFS(process: Process(), backing: daemon.directory + "/backing", stall: daemon.directory + "/stall", fail: daemon.directory + "/fail",
                        hang: daemon.directory + "/hang")
        try FileManager.default.createDirectory(atPath: fs.backing, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
        fs.process.executableURL = URL(fileURLWithPath: TestEnvironment.packageRoot + "/scripts/dev/slowfs")
        fs.process.arguments = [fs.backing, daemon.stateDirectory, fs.stall, fs.fail, fs.hang]
        // Not the test's own output: a slowfs that outlived the test would hold it open.
        fs.process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        fs.process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try fs.process.run()
        var failure: (any Error)?
        do {
            try await eventually(timeout: 10, "slowfs to mount") {
                ((try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? "").contains(" \(daemon.stateDirectory) fuse")
            }
            try await body(fs)
        } catch {
            failure = error
        }
        try? FileManager.default.removeItem(atPath: fs.stall)
        try? FileManager.default.removeItem(atPath: fs.fail)
        try? FileManager.default.removeItem(atPath: fs.hang)
        await daemon.stop()
        await unmount(daemon.stateDirectory)
        fs.process.terminate()
        try? await eventually(timeout: 5, "slowfs to end") { !fs.process.isRunning }
        if fs.process.isRunning { kill(fs.process.processIdentifier, SIGKILL) }
        if let failure { throw failure }
    }

    /// A disk that fails on flush (fsync: EIO): the change is made but the answer says it
    /// was not saved, the doctor says so, and the same change asked again is written then.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/fuse"), "needs FUSE"))
    func aFlushThatFailsIsReportedAndTheChangeIsWrittenWhenAskedAgain() async throws {
        let daemon = try DaemonProcess()
        try await withSlowFS(daemon) { fuse in
            try await daemon.start()
            let client = HandoffClient(socketPath: daemon.socketPath)
            _ = try await client.becomeCurrent(ActivityDraft(activityType: "org.example.first"))

            _ = FileManager.default.createFile(atPath: fuse.fail, contents: Data())
            var made: ActivityRecord?
            let failed = await apiError { made = try await client.becomeCurrent(ActivityDraft(activityType: "org.example.unflushed")) }
            #expect(made == nil)
            #expect(failed?.status == 507 && failed?.code == "not_saved", "\(String(describing: failed))")
            #expect(failed?.message.contains("made the change") == true && failed?.message.contains("Input/output error") == true,
                    "\(String(describing: failed))")
            #expect(try savedTypes(daemon) == ["org.example.first"])
            let space = try #require(try await client.diagnostics().first { $0.id == "state-space" })
            #expect(space.status == .failed && space.detail.contains("activities.json could not be saved"), "\(space)")

            // The disk is back: asking for the same thing again writes it (it is already
            // current in memory, so the snapshot is the one whose flush failed).
            try FileManager.default.removeItem(atPath: fuse.fail)
            let current = try #require(try await client.current())
            #expect(current.activity.activityType == "org.example.unflushed")
            _ = try await client.becomeCurrent(existing: current.activity.id.rawValue)
            #expect(try savedTypes(daemon) == ["org.example.first", "org.example.unflushed"])
            #expect(try await client.diagnostics().first { $0.id == "state-space" }?.status == .ok)
            await daemon.crash()
            try await daemon.start()
            #expect(try await client.current()?.activity.activityType == "org.example.unflushed")
        }
    }

    /// A disk that stalls on flush (fsync waits, as on a busy disk or a network home):
    /// the change waiting for it is answered once it is flushed and in place, and nothing
    /// else waits. Before, the fsync ran on the event loop and every request, link and
    /// stream of the daemon stopped until it returned.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/fuse"), "needs FUSE"))
    func aDiskThatStallsOnFlushHoldsOnlyTheChangeThatWaitsForIt() async throws {
        let daemon = try DaemonProcess()
        try await withSlowFS(daemon) { fuse in
            let backing = fuse.backing, stall = fuse.stall
            try await daemon.start()
            let ctl = try TestEnvironment.binary("handoffctl")
            func handoffctl(_ args: [String]) async throws -> CommandResult {
                // `timeout`: a daemon stuck behind the disk fails the test instead of hanging it.
                try await CommandLineTool.run("/usr/bin/timeout", ["30", ctl, "--socket", daemon.socketPath] + args, environment: daemon.environment)
            }
            var first = ActivityDraft(activityType: "org.example.first")
            first.title = "Saved before the disk stalled"
            _ = try await HandoffClient(socketPath: daemon.socketPath).becomeCurrent(first)

            _ = FileManager.default.createFile(atPath: stall, contents: Data())
            let stalled = Task { try await handoffctl(["become-current", "--type", "org.example.stalled", "--title", "Made while the disk stalls"]) }
            try await eventually(timeout: 10, "the stalled change's temporary file") {
                AtomicNames.temporaries(in: backing).count > 0
            }
            // Everything that needs no saving is answered meanwhile (a change that does, such
            // as an app's activity resigning the daemon-owned current one, waits its turn).
            for command in [["status"], ["peers"], ["list"], ["devices"]] {
                let r = try await handoffctl(command)
                #expect(r.status == 0, "handoffctl \(command.joined(separator: " ")): \(r)")
            }
            let client = HandoffClient(socketPath: daemon.socketPath)
            // Two more changes queue behind it, each decided and written in its turn once the
            // disk is back (so nothing of theirs is on disk yet).
            func aheadWrites() -> Int { daemon.log().components(separatedBy: "waits for the one before it").count - 1 }
            var queued = aheadWrites()
            let second = Task { try await handoffctl(["become-current", "--type", "org.example.second"]) }
            try await eventually(timeout: 10, "the second change to wait for the disk") { aheadWrites() > queued }
            queued = aheadWrites()
            let third = Task { try await handoffctl(["become-current", "--type", "org.example.third"]) }
            try await eventually(timeout: 10, "the third change to wait for the disk") { aheadWrites() > queued }
            // ...while the stalled change is still not in place: the disk still holds it.
            #expect(FileManager.default.fileExists(atPath: stall))
            #expect(try savedTypes(daemon) == ["org.example.first"])

            // The disk flushes: the changes are answered, in place, and survive a crash.
            try FileManager.default.removeItem(atPath: stall)
            for change in [stalled, second, third] {
                let made = try await change.value
                #expect(made.status == 0, "\(made)")
            }
            #expect(try savedTypes(daemon) == ["org.example.first", "org.example.stalled", "org.example.second", "org.example.third"])
            #expect(AtomicNames.temporaries(in: backing).isEmpty)
            await daemon.crash()
            try await daemon.start()
            #expect(try await client.current()?.activity.activityType == "org.example.third")
            #expect(!daemon.log().contains("could not save"), "\(daemon.log())")
        }
    }
}

extension StateFaultTests {
    /// How long `body` took, in milliseconds; fails if it took more than `limit` seconds (a
    /// request stuck behind the disk, which would otherwise hang the test).
    func timed(_ what: String, limit: Double = 10, _ body: @escaping @Sendable () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await body(); return true }
            group.addTask { try await Task.sleep(for: .seconds(limit)); return false }
            let finished = try await group.next()!
            group.cancelAll()
            if !finished { throw TestFailure("\(what) was not answered within \(limit) s while the disk hung") }
        }
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    /// A disk that stops answering altogether (every call of the file system waits, as on
    /// a network home whose server is gone): the changes that must be saved wait for it,
    /// one of each kind; everything else is answered meanwhile, here and to a peer that
    /// continues this workstation's activity; once the disk answers, the changes that
    /// waited are made and saved. Before, the temporary file was written on the actor that
    /// holds the activities, and every request behind it waited too.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/fuse"), "needs FUSE"))
    func aDiskThatHangsHoldsOnlyTheChangesThatWaitForIt() async throws {
        let daemon = try DaemonProcess()
        try await withSlowFS(daemon) { fuse in
            try await daemon.start()
            let client = HandoffClient(socketPath: daemon.socketPath)
            let peer = try await DaemonProcess().start()
            defer { Task { await peer.stop() } }
            let peerClient = HandoffClient(socketPath: peer.socketPath)
            let here = try await client.identity().deviceID, there = try await peerClient.identity().deviceID
            _ = try await client.trust(there, name: "peer", address: "127.0.0.1:\(try PeerTLSRefusalTests.peerPort(peer))")
            _ = try await peerClient.trust(here, name: "desk", address: "127.0.0.1:\(try PeerTLSRefusalTests.peerPort(daemon))")
            var first = ActivityDraft(activityType: "org.example.first")
            first.title = "Made before the disk hung"
            _ = try await client.becomeCurrent(first)
            try await eventually(timeout: 20, "the peer to see the offer") {
                try await peerClient.offers().contains { $0.activity.title == first.title }
            }

            let session = try await client.openSession()
            _ = FileManager.default.createFile(atPath: fuse.hang, contents: Data())
            let otherID = DeviceID(bytes: Array(repeating: 7, count: 32)).description
            let answered = AnsweredCount()
            let waiting: [Task<Void, any Error>] = [
                Task { _ = try await client.becomeCurrent(ActivityDraft(activityType: "org.example.second")); answered.add() },
                Task { _ = try await client.trust(otherID, name: "third desk"); answered.add() },
                Task { try await client.saveState(app: "org.example.Editor", version: "1", entries: ["cursor": .integer(3)]); answered.add() },
            ]
            // 0.5 s: each is answered within milliseconds on a disk that takes writes.
            try await never(within: 0.5, because: "a change that must be saved was answered while the disk hung") { answered.value > 0 }

            // Everything that needs no saving is answered, again and again.
            var times: [Double] = []
            var draft = ActivityDraft(activityType: "org.example.app")
            draft.title = "An app's own activity"
            let app = draft
            times.append(try await timed("an app's own activity") { _ = try await client.becomeCurrent(app, session: session.token) })
            for _ in 0..<5 {
                times.append(try await timed("status") { _ = try await client.status() })
                times.append(try await timed("current") { _ = try await client.current() })
                times.append(try await timed("activities") { _ = try await client.activities() })
                times.append(try await timed("peers") { _ = try await client.peers() })
                times.append(try await timed("identity") { _ = try await client.identity() })
                times.append(try await timed("state") { _ = try await client.listState() })
                times.append(try await timed("devices") { _ = try await client.devices() })
            }
            // The peer continues it: this workstation's peer side answers too.
            #expect(try await client.current()?.activity.title == app.title)
            let continued = ContinuedBox()
            try await eventually(timeout: 20, "the peer to see the app's activity") {
                try await peerClient.offers().contains { $0.activity.title == app.title }
            }
            let peerTime = try await timed("the peer's continue") { continued.value = try await peerClient.continueActivity(from: here.description) }
            #expect(continued.value?.record.activity.title == app.title)
            times.sort()
            print("while the disk hung: \(times.count) requests answered, median \(String(format: "%.1f", times[times.count / 2])) ms, " +
                  "slowest \(String(format: "%.1f", times.last!)) ms; the peer's continue took \(String(format: "%.1f", peerTime)) ms")
            // ...and the changes that must be saved still wait for the disk.
            #expect(FileManager.default.fileExists(atPath: fuse.hang))
            #expect(try await client.peers().contains { $0.id == otherID } == false)
            #expect(try await client.listState().isEmpty)

            // The disk answers: the changes that waited are made, saved, and survive a crash.
            try FileManager.default.removeItem(atPath: fuse.hang)
            for change in waiting { try await change.value }
            session.close()
            await daemon.crash()
            try await daemon.start()
            #expect(try savedTypes(daemon).contains("org.example.second"))
            #expect(try await client.peers().contains { $0.id == otherID && $0.trusted })
            #expect(try await client.listState().map(\.app) == ["org.example.Editor"])
            #expect(!daemon.log().contains("could not save"), "\(daemon.log())")
        }
    }
}

final class ContinuedBox: @unchecked Sendable {
    var value: ContinuedActivity?
}

/// The temporary files `AtomicFile` writes beside a state file before putting it in place.
enum AtomicNames {
    static func temporaries(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.contains(".tmp-") }
    }
}

/// How many of the changes waiting for a hung disk have been answered.
final class AnsweredCount: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.withLock { n += 1 } }
    var value: Int { lock.withLock { n } }
}
