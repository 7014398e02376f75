import Foundation
import HandoffClient
import HandoffCore
import HandoffControlAPI
import HandoffTestSupport
import Testing

/// The built handoffctl against a real daemon: output, exit codes, messages.
@Suite struct CommandLineTests {
    func ctl(_ daemon: DaemonProcess, _ args: String..., stdin: String? = nil) async throws -> CommandResult {
        try await CommandLineTool.handoffctl(args, daemon: daemon, stdin: stdin)
    }

    @Test func notRunningSaysHowToStartAndExits3() async throws {
        let daemon = try DaemonProcess()  // never started
        for args in [["status"], ["current"], ["become-current", "--type", "com.example.x"], ["watch"]] {
            let r = try await CommandLineTool.handoffctl(args, daemon: daemon)
            #expect(r.status == 3, "\(args): \(r)")
            #expect(r.stderr == "handoffctl: handoffd is not running (no socket at \(daemon.socketPath)); start it with `systemctl --user start handoffd`\n", "\(r)")
            #expect(r.stdout.isEmpty)
        }
        // A stale socket file with nobody behind it says so.
        try await daemon.start()
        await daemon.crash()
        let r = try await ctl(daemon, "status")
        #expect(r.status == 3)
        #expect(r.stderr.contains("handoffd is not running"))
        #expect(r.stderr.contains("systemctl --user start handoffd"))
    }

    /// As docker and tailscale users type them: the shared options before the command.
    @Test func sharedOptionsMayComeBeforeTheCommand() async throws {
        let daemon = try await DaemonProcess().start()
        var env = ProcessInfo.processInfo.environment
        env["HANDOFF_SOCKET"] = nil
        env["XDG_RUNTIME_DIR"] = daemon.directory + "/elsewhere"
        let ctl = try TestEnvironment.binary("handoffctl")
        let status = try await CommandLineTool.run(ctl, ["--socket", daemon.socketPath, "status"], environment: env)
        #expect(status.status == 0 && status.stdout.contains("device:    test-device"), "\(status)")
        let json = try await CommandLineTool.run(ctl, ["--json", "--socket=\(daemon.socketPath)", "status"], environment: env)
        #expect(json.status == 0 && (try? DaemonStatus(json: try JSONValue(parsing: json.stdout)))?.deviceName == "test-device", "\(json)")
        // Nested commands too, and the options still work after the command.
        let sources = try await CommandLineTool.run(ctl, ["--socket", daemon.socketPath, "sources", "on", "media"], environment: env)
        #expect(sources.stderr.contains("session agent"), "reached the daemon, which has no agent: \(sources)")
        let after = try await CommandLineTool.run(ctl, ["status", "--socket", daemon.socketPath, "--json"], environment: env)
        #expect(after.status == 0, "\(after)")
        // An option nobody takes is still an error, and so is a leading option without a command.
        let bogus = try await CommandLineTool.run(ctl, ["--bogus", "status"], environment: env)
        #expect(bogus.status == 2 && bogus.stderr.contains("--bogus"), "\(bogus)")
        let alone = try await CommandLineTool.run(ctl, ["--json"], environment: env)
        #expect(alone.status == 2, "\(alone)")
    }

    /// A forgotten `become-current` from a terminal is not offered for days: without an
    /// owner and without --expires it expires after `unowned-expiry-minutes` (12 h).
    @Test func unownedActivitiesGetADefaultExpiry() async throws {
        let daemon = try await DaemonProcess().start()
        let before = SystemClock.now()
        _ = try await ctl(daemon, "become-current", "--type", "com.example.forgotten")
        let a = try #require(try await HandoffClient(socketPath: daemon.socketPath).current()).activity
        let expiry = try #require(a.expirationDate, "an unowned activity gets an expiry")
        let hours = Double(before.nanoseconds(until: expiry)) / 3.6e12
        #expect(hours > 11.99 && hours < 12.01, "\(hours) h")
        // Its own expiry wins.
        _ = try await ctl(daemon, "become-current", "--type", "com.example.brief", "--expires", "10m")
        let brief = try #require(try await HandoffClient(socketPath: daemon.socketPath).current()).activity
        #expect(brief.expirationDate.map { before.nanoseconds(until: $0) < 11 * 60 * 1_000_000_000 } == true)
        // An owned activity lives as long as its owner.
        let client = HandoffClient(socketPath: daemon.socketPath)
        let session = try await client.openSession()
        let owned = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.owned"), session: session.token)
        #expect(owned.activity.expirationDate == nil)
        // And 0 turns it off.
        let forever = try await DaemonProcess(arguments: ["--unowned-expiry-minutes", "0"]).start()
        _ = try await ctl(forever, "become-current", "--type", "com.example.kept")
        #expect(try await HandoffClient(socketPath: forever.socketPath).current()?.activity.expirationDate == nil)
    }

    @Test func statusForPeopleAndForScripts() async throws {
        let daemon = try await DaemonProcess().start()
        let human = try await ctl(daemon, "status")
        #expect(human.status == 0)
        #expect(human.stdout.contains("device:    test-device"))
        #expect(human.stdout.contains("current:   none"))
        #expect(human.stdout.contains("discovery: unavailable"))
        let json = try await ctl(daemon, "status", "--json")
        let status = try DaemonStatus(json: try JSONValue(parsing: json.stdout))
        #expect(status.deviceName == "test-device")
        #expect(status.socketPath == daemon.socketPath)
    }

    @Test func becomeCurrentPrintsTheIdAndTypedValuesArrive() async throws {
        let daemon = try await DaemonProcess().start()
        // Streams need a source: without --attach, a file handoffd serves.
        let streamFile = daemon.directory + "/bulk.bin"
        try Data(repeating: 7, count: 10).write(to: URL(fileURLWithPath: streamFile))
        let r = try await ctl(daemon, "become-current", "--type", "com.example.editor.edit-note", "--title", "Draft",
                              "--info", "name=Ada", "--info", "page:=12", "--info", "zoom:=1.5", "--info", "pinned:=true",
                              "--info", #"seen:={"$date":"2026-11-21T10:00:00.250Z"}"#, "--info", #"raw:={"$data":"AAEC"}"#,
                              "--required-keys", "name,page", "--webpage-url", "https://example.org/n/1",
                              "--keywords", "draft, notes", "--expires", "10m", "--search", "--streams", "--stream-file", streamFile,
                              "--needs-save")
        #expect(r.status == 0, "\(r)")
        let id = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(ActivityID(id) != nil, "\(r)")
        let a = try #require(try await HandoffClient(socketPath: daemon.socketPath).current()).activity
        #expect(a.id.rawValue == id)
        #expect(a.userInfo == ["name": .string("Ada"), "page": .integer(12), "zoom": .double(1.5), "pinned": .boolean(true),
                               "seen": .date(Timestamp(rfc3339: "2026-11-21T10:00:00.250Z")!), "raw": .data([0, 1, 2])])
        #expect(a.requiredUserInfoKeys == ["name", "page"])
        #expect(a.keywords == ["draft", "notes"])
        #expect(a.webpageURL == "https://example.org/n/1")
        #expect(a.eligibleForSearch && a.supportsContinuationStreams && a.needsSave && a.eligibleForHandoff)
        let remaining = try #require(a.expirationDate).seconds - SystemClock.now().seconds
        #expect((590...600).contains(remaining))
        // --json prints the whole activity.
        let j = try await ctl(daemon, "become-current", "--type", "com.example.j", "--json", "--no-handoff")
        let record = try ActivityRecord(json: try JSONValue(parsing: j.stdout))
        #expect(record.activity.eligibleForHandoff == false)
        #expect(record.state == .current)
    }

    @Test func infoJSONFromStdin() async throws {
        let daemon = try await DaemonProcess().start()
        let r = try await ctl(daemon, "become-current", "--type", "com.example.stdin", "--info-json", "-", "--info", "b=override",
                              stdin: #"{"a": [1, 2.0, {"$url": "https://x.org"}], "b": "original", "s": {"$set": ["x", "y"]}}"#)
        #expect(r.status == 0, "\(r)")
        let a = try #require(try await HandoffClient(socketPath: daemon.socketPath).current()).activity
        #expect(a.userInfo == ["a": .array([.integer(1), .double(2.0), .url("https://x.org")]), "b": .string("override"),
                               "s": .set([.string("x"), .string("y")])])
    }

    @Test func usageErrorsExit2AndRefusalsExit1() async throws {
        let daemon = try await DaemonProcess().start()
        var r = try await ctl(daemon, "become-current")  // no --type
        #expect(r.status == 2, "\(r)")
        r = try await ctl(daemon, "become-current", "--type", "com.example.x", "--info", "novalue")
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr.contains("KEY=VALUE"))
        r = try await ctl(daemon, "become-current", "--type", "com.example.x", "--info", "n:={broken")
        #expect(r.status == 2, "\(r)")
        r = try await ctl(daemon, "become-current", "--type", "com.example.x", "--expires", "soon")
        #expect(r.status == 2, "\(r)")
        r = try await ctl(daemon, "become-current", "--type", "com.example.x", "--refresh-with", "true")
        #expect(r.status == 2, "\(r)")
        r = try await ctl(daemon, "frobnicate")
        #expect(r.status == 2, "\(r)")
        r = try await ctl(daemon, "become-current", "--type", "not_reverse_dns")
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("activityType"))
        r = try await ctl(daemon, "become-current", "--type", "com.example.x", "--webpage-url", "ftp://x.org")
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("http or https"))
        r = try await ctl(daemon, "current")
        #expect(r.status == 1)
        #expect(r.stderr.contains("no activity is current"))
        r = try await ctl(daemon, "--help")
        #expect(r.status == 0)
        #expect(r.stdout.contains("become-current"))
    }

    @Test func updateResignInvalidate() async throws {
        let daemon = try await DaemonProcess().start()
        let id = try await ctl(daemon, "become-current", "--type", "com.example.cycle", "--info", "a=1")
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        var r = try await ctl(daemon, "update", "--info", "b:=2", "--title", "new")
        #expect(r.status == 0, "\(r)")
        let client = HandoffClient(socketPath: daemon.socketPath)
        #expect(try await client.current()?.activity.userInfo == ["a": .string("1"), "b": .integer(2)])
        r = try await ctl(daemon, "update", id, "--replace", "--info", "c=3")
        #expect(try await client.current()?.activity.userInfo == ["c": .string("3")])
        r = try await ctl(daemon, "current")
        #expect(r.stdout.contains("title:    new"))
        #expect(r.stdout.contains("c = \"3\""))
        r = try await ctl(daemon, "resign")
        #expect(r.status == 0)
        #expect(try await client.current() == nil)
        r = try await ctl(daemon, "invalidate", id)
        #expect(r.status == 0)
        r = try await ctl(daemon, "update", id, "--title", "too late")
        #expect(r.status == 1)
        #expect(r.stderr.contains("invalidated"))
    }

    @Test func watchPrintsEventsAsJSONLines() async throws {
        let daemon = try await DaemonProcess().start()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try TestEnvironment.binary("handoffctl"))
        p.arguments = ["watch", "--json"]
        p.environment = daemon.environment
        // Into a file, which the test can read while watch runs (it writes each line at once).
        let outPath = daemon.directory + "/watch.out"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        // A handle that never closes itself, as in DaemonProcess.start: Process closes it.
        let fd = open(outPath, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("cannot open \(outPath)") }
        p.standardOutput = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        func printed() -> String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
        let client = HandoffClient(socketPath: daemon.socketPath)
        try await eventually("watch to open its session") { try await client.status().sessions == 1 }
        _ = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.watched"))
        _ = try await client.invalidate()
        try await eventually("watch to print the invalidated event") { printed().contains("\"invalidated\"") }
        kill(p.processIdentifier, SIGINT)
        await p.exit()
        let lines = printed().split(separator: "\n")
        let names = try lines.map { try ControlEvent(json: try JSONValue(parsing: String($0))).name }
        #expect(names == ["session", "became-current", "invalidated"])
    }

    @Test func attachedOwnerRefreshesAndItsActivityDiesWithIt() async throws {
        let daemon = try await DaemonProcess(arguments: ["--will-save-timeout-ms", "10000"]).start()
        let counter = daemon.directory + "/position"
        try "41".write(toFile: counter, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try TestEnvironment.binary("handoffctl"))
        p.arguments = ["become-current", "--type", "com.example.player", "--title", "Film", "--info", "position:=0",
                       "--needs-save", "--attach", "--refresh-with", "echo \"{\\\"position\\\": $(cat \(counter))}\""]
        p.environment = daemon.environment
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        let client = HandoffClient(socketPath: daemon.socketPath)
        try await eventually("the attached activity") { try await client.current()?.activity.activityType == "com.example.player" }
        let a = try #require(try await client.current())
        #expect(a.owner == "session")
        // A fresh snapshot runs the command: the payload is what it prints now.
        var snap = try await client.snapshot()
        #expect(snap.stale == false)
        #expect(snap.activity.userInfo == ["position": .integer(41)])
        // needsSave is cleared by the save; mark it again and the command runs again.
        try "99".write(toFile: counter, atomically: true, encoding: .utf8)
        var u = ActivityUpdate()
        u.needsSave = true
        _ = try await client.update("current", u)
        snap = try await client.snapshot()
        #expect(snap.activity.userInfo == ["position": .integer(99)])
        // Killing the owner (as a crash would) ends the activity.
        kill(p.processIdentifier, SIGKILL)
        await p.exit()
        try await eventually("the owner's activity to be invalidated") {
            try await client.activity(a.activity.id.rawValue).state == .invalidated
        }
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines) == a.activity.id.rawValue)
    }

    @Test func attachedOwnerEndsWhenItsActivityIsInvalidated() async throws {
        let daemon = try await DaemonProcess().start()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try TestEnvironment.binary("handoffctl"))
        p.arguments = ["become-current", "--type", "com.example.ends", "--attach"]
        p.environment = daemon.environment
        p.standardOutput = Pipe()
        p.standardError = Pipe()
        try p.run()
        let client = HandoffClient(socketPath: daemon.socketPath)
        try await eventually("the attached activity") { try await client.current() != nil }
        _ = try await client.invalidate()
        await p.exit()
        #expect(p.terminationStatus == 0)
    }

    @Test func socketOptionAndEnvironmentOverride() async throws {
        let daemon = try await DaemonProcess().start()
        var env = daemon.environment
        env["HANDOFF_SOCKET"] = "/nonexistent/handoffd.sock"
        let viaFlag = try await CommandLineTool.run(try TestEnvironment.binary("handoffctl"), ["status", "--socket", daemon.socketPath], environment: env)
        #expect(viaFlag.status == 0, "\(viaFlag)")
        let viaEnv = try await CommandLineTool.run(try TestEnvironment.binary("handoffctl"), ["status"], environment: env)
        #expect(viaEnv.status == 3)
        #expect(viaEnv.stderr.contains("/nonexistent/handoffd.sock"))
    }
}
