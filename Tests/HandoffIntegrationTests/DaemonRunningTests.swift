import Foundation
import HandoffClient
import HandoffCore
import HandoffControlAPI
import HandoffTestSupport
import Testing

/// How handoffd runs: restarts, a second instance, signals, systemd readiness and
/// socket activation, the config file.
@Suite struct DaemonRunningTests {
    @Test func currentActivitySurvivesKillNine() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        var d = ActivityDraft(activityType: "com.example.durable")
        d.title = "survivor"
        d.userInfo = ["when": .date(Timestamp(seconds: 1_800_000_000, nanoseconds: 5)), "n": .integer(-3), "x": .double(0.1)]
        let older = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.older"))
        let made = try await client.becomeCurrent(d)
        var expiring = ActivityDraft(activityType: "com.example.short")
        // Long enough for the request to arrive before it on a loaded CI machine (800 ms
        // was not), short enough to pass while the daemon is down.
        expiring.expirationDate = SystemClock.now().adding(nanoseconds: 3_000_000_000)
        let short = try await client.becomeCurrent(expiring)
        _ = try await client.becomeCurrent(existing: made.activity.id.rawValue)
        await daemon.crash()
        // `short` expires while the daemon is down: wait until its expiration date has passed.
        let expiry = expiring.expirationDate!
        try await eventually("`short` to expire while the daemon is down") { SystemClock.now() >= expiry }
        try await daemon.start()
        let back = try #require(try await client.current())
        #expect(back.activity == made.activity)
        #expect(try await client.activity(older.activity.id.rawValue).state == .resigned)
        await #expect(throws: HandoffClientError.self) { _ = try await client.activity(short.activity.id.rawValue) }
    }

    @Test func sessionActivitiesAreNotRestored() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let session = try await client.openSession()
        _ = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.app"), session: session.token)
        await daemon.crash()
        try await daemon.start()
        #expect(try await client.current() == nil)
    }

    @Test func corruptStateIsSetAsideNotFatal() async throws {
        let daemon = try DaemonProcess()
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
        try "{ not json".write(toFile: daemon.stateDirectory + "/activities.json", atomically: true, encoding: .utf8)
        try await daemon.start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        #expect(try await client.current() == nil)
        // Kept aside under a name of its own (a later damaged file does not overwrite it).
        let kept = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory).filter { $0.hasPrefix("activities.json.unreadable-") }
        #expect(kept.count == 1, "\(kept)")
        #expect(try String(contentsOfFile: daemon.stateDirectory + "/" + kept[0], encoding: .utf8) == "{ not json")
        _ = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.fresh"))
    }

    @Test func secondDaemonLeavesTheFirstAlone() async throws {
        let first = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: first.socketPath)
        let a = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.first"))
        let second = try DaemonProcess(directory: first.directory)
        try await second.start(waitUntilReady: false)
        await second.process?.exit()
        #expect(second.process?.terminationStatus == 1)
        #expect(second.log().contains("already running"))
        #expect(try await client.current()?.activity.id == a.activity.id)
        #expect(UnixSocketProbe.canConnect(first.socketPath))
    }

    @Test func staleSocketFileIsReplaced() async throws {
        let daemon = try await DaemonProcess().start()
        await daemon.crash()  // leaves the socket file behind
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
        try await daemon.start()
        #expect(try await HandoffClient(socketPath: daemon.socketPath).status().pid == daemon.pid)
    }

    @Test func sigtermStopsGracefully() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let session = try await client.openSession()
        let watcher = EventRecorder(session)
        #expect(await daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        try await eventually("the event stream to end") { await watcher.ended }
        #expect(await !watcher.failed, "the stream must end with its last chunk, not be cut")
        #expect(daemon.log().contains("handoffd stopped"))
    }

    /// SIGTERM while connections keep arriving at the peer port (as when a stopping
    /// workstation's peers dial it back): connections accepted as the listener closes are
    /// ended properly, and handoffd exits 0. It used to trap (SIGILL, "Deinited
    /// NIOAsyncWriter without calling finish()") in most such stops: NIO's async listener
    /// dropped connections it had accepted but not yet handed over. Three stops, each
    /// under a churn of TLS handshakes from 40 loopback addresses.
    @Test func sigtermWhileConnectionsArriveStopsCleanly() async throws {
        let sources = (2...41).map { "127.0.0.\($0)" }.joined(separator: ",")
        for round in 1...3 {
            let daemon = try await DaemonProcess().start()
            // Ready means the control socket answers; the peer listener may come a moment later.
            try? await eventually("the peer listener to be ready") { daemon.log().contains("peer listener ready") }
            let log = daemon.log()
            guard let line = log.split(separator: "\n").last(where: { $0.contains("peer listener ready") }),
                  let part = line.split(separator: " ").first(where: { $0.hasPrefix("port=") }) else {
                throw TestFailure("no peer port in the log:\n\(log)")
            }
            let floodOut = daemon.directory + "/flood.out"
            let flooder = try CommandLineTool.spawn(
                "/usr/bin/env", ["python3", TestEnvironment.packageRoot + "/scripts/dev/peer-flood", "handshakes", "127.0.0.1",
                                 String(part.dropFirst(5)), "--concurrency", "40", "--sources", sources, "--duration", "20"],
                environment: ProcessInfo.processInfo.environment, stdin: "/dev/null", stdout: floodOut, stderr: floodOut)
            defer {
                kill(flooder, SIGKILL)
                var st: Int32 = 0
                waitpid(flooder, &st, 0)
            }
            // The churn is under way: handoffd has refused a first round of the 40 workers'
            // handshakes (each ends a connection in its debug log).
            try await eventually(20, "handoffd to work through the flood's handshakes (round \(round))") {
                daemon.log().components(separatedBy: "peer connection ended").count - 1 >= 40
            }
            let status = await daemon.stop()
            #expect(status == 0, "round \(round): handoffd exited with \(status):\n\(daemon.log().suffix(3000))")
            #expect(!daemon.log().contains("crashed"), "round \(round):\n\(daemon.log().suffix(3000))")
            #expect(daemon.log().contains("handoffd stopped"), "round \(round)")
            if status != 0 { break }
        }
    }

    @Test func notifiesSystemdWhenReady() async throws {
        let daemon = try DaemonProcess()
        let notifyPath = daemon.directory + "/notify.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)  // not inherited by other tests' children
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in notifyPath.utf8.enumerated() { raw[i] = b } }
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(rc == 0)
        setenv("NOTIFY_SOCKET", notifyPath, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try TestEnvironment.binary("handoffd"))
        p.arguments = ["--socket", daemon.socketPath, "--state-dir", daemon.stateDirectory, "--no-discovery", "--peer-listen", "127.0.0.1"]
        var env = daemon.environment
        env["NOTIFY_SOCKET"] = notifyPath
        p.environment = env
        try p.run()
        defer { kill(p.processIdentifier, SIGKILL) }
        let message = await offPool { () -> String in
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 10_000) == 1 else { return "(nothing within 10 s)" }
            var buf = [UInt8](repeating: 0, count: 512)
            let n = recv(fd, &buf, buf.count, 0)
            return String(decoding: buf[0..<max(0, n)], as: UTF8.self)
        }
        #expect(message.contains("READY=1"), "\(message)")
        // Ready means ready: the socket answers.
        #expect(UnixSocketProbe.canConnect(daemon.socketPath))
    }

    @Test func takesItsSocketFromSystemd() async throws {
        let activate = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: activate) else {
            throw TestFailure("systemd-socket-activate is needed (Debian package systemd)")
        }
        let daemon = try DaemonProcess()
        try FileManager.default.createDirectory(atPath: daemon.directory + "/run/handoff", withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: activate)
        p.arguments = ["-l", daemon.socketPath, "--fdname=control", try TestEnvironment.binary("handoffd"),
                       "--socket", daemon.socketPath, "--state-dir", daemon.stateDirectory, "--no-discovery", "--peer-listen", "127.0.0.1"]
        p.environment = daemon.environment
        let log = Pipe()
        p.standardError = log
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        // 30 s, as for any daemon's start: the whole suite's first burst starves starts (DaemonProcess).
        try await eventually(timeout: 30, "the activating socket") { FileManager.default.fileExists(atPath: daemon.socketPath) }
        // The first connection starts handoffd on the inherited socket.
        let client = HandoffClient(socketPath: daemon.socketPath)
        let status = try await client.status()
        #expect(status.pid == p.processIdentifier)  // systemd-socket-activate execs the daemon in place
        _ = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.activated"))
        kill(p.processIdentifier, SIGTERM)
        await p.exit()
        #expect(p.terminationStatus == 0)
        // An inherited socket's file belongs to systemd: handoffd must not unlink it.
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    @Test func configFileAppliesAndFlagsWin() async throws {
        let daemon = try DaemonProcess(arguments: ["--name", "from-flag"])
        let configDir = daemon.directory + "/config/handoff"
        try FileManager.default.createDirectory(atPath: configDir, withIntermediateDirectories: true)
        try """
            # handoffd settings
            name = from-file
            max-activity-bytes = 1024
            """.write(toFile: configDir + "/handoffd.conf", atomically: true, encoding: .utf8)
        try await daemon.start()
        let s = try await HandoffClient(socketPath: daemon.socketPath).status()
        #expect(s.deviceName == "from-flag")  // DaemonProcess passes --name test-device first; the later flag wins
        #expect(s.maximumActivityBytes == 1024)
    }

    /// The history's store runs in `handoff-history`, so that handoffd never maps full
    /// Foundation and ICU (about 5 MB resident, Docs/Performance.md): not at start, not
    /// while the history is used; the helper runs only while asked, and ends when quiet.
    @Test func theHistoryRunsInAHelperAndHandoffdNeverLoadsFoundation() async throws {
        let daemon = try DaemonProcess()
        let configDir = daemon.directory + "/config/handoff"
        try FileManager.default.createDirectory(atPath: configDir, withIntermediateDirectories: true)
        try "history-helper-idle-seconds = 1\n".write(toFile: configDir + "/handoffd.conf", atomically: true, encoding: .utf8)
        try await daemon.start()
        defer { Task { _ = await daemon.stop() } }
        func mapsFoundation() throws -> [String] {
            let maps = try String(contentsOfFile: "/proc/\(daemon.pid)/maps", encoding: .utf8)
            return ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so"].filter { maps.contains($0) }
        }
        func helpers() -> [Int32] {
            let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return pids.compactMap(Int32.init).filter { pid in
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")") else { return false }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                return stat.contains("(handoff-history)") && fields.count > 1 && Int32(fields[1]) == daemon.pid
            }
        }
        #expect(try mapsFoundation() == [])
        #expect(helpers().isEmpty, "no helper before the history is needed")
        let client = HandoffClient(socketPath: daemon.socketPath)
        var draft = ActivityDraft(activityType: "org.example.edit")
        draft.title = "Quarterly plan"
        draft.eligibleForSearch = true
        _ = try await client.becomeCurrent(draft)
        // Counted right after a query that found it: the helper ends one quiet second later,
        // which a loaded machine can let pass between two separate steps.
        try await eventually("the offer to reach the history, served by one helper, a child of handoffd") {
            try await client.history(HistoryQuery(text: "quarterly")).count == 1 && helpers().count == 1
        }
        #expect(try mapsFoundation() == [], "handoffd itself still maps no full Foundation")
        try await eventually("the helper to end after its quiet second") { helpers().isEmpty }
        #expect(try await client.history(HistoryQuery(text: "plan")).map(\.title) == ["Quarterly plan"], "started again, same history")
    }

    /// Once ready, handoffd hands the pages only start-up used back to the kernel (what
    /// that saves is measured by scripts/bench/bench-local, not here: pages other handoffd
    /// processes of a parallel test run also map are not reclaimed), then maps back what
    /// serving a request runs with two requests of its own. Everything still works.
    @Test func startupCodeIsHandedBackAndTheDaemonWorksOn() async throws {
        let daemon = try await DaemonProcess().start()
        defer { Task { _ = await daemon.stop() } }
        try await eventually(timeout: 20, "the start-up code to be handed back\n\(daemon.log())") {
            daemon.log().contains("start-up code handed back to the kernel")
        }
        let line = try #require(daemon.log().split(separator: "\n").first { $0.contains("start-up code handed back") })
        let bytes = line.split(separator: "=").last.flatMap { Int($0) } ?? 0
        #expect(bytes > 1 << 20, "the executable's code was advised: \(line)")
        // Then it asks itself for what a request runs, so the first one after idle is quick.
        try await eventually(timeout: 20, "the request path to be mapped back\n\(daemon.log())") {
            daemon.log().contains("request path mapped back")
        }
        #expect(daemon.log().contains("request path mapped back requests=2"), "both answered: \(daemon.log())")
        let client = HandoffClient(socketPath: daemon.socketPath)
        var draft = ActivityDraft(activityType: "org.example.edit")
        draft.title = "After the release"
        let record = try await client.becomeCurrent(draft)
        #expect(try await client.activity(record.activity.id.rawValue).activity.title == "After the release")
        #expect(try await client.status().deviceName == "test-device")
    }

    @Test func badConfigFileIsAClearError() async throws {
        let daemon = try DaemonProcess()
        let configDir = daemon.directory + "/config/handoff"
        try FileManager.default.createDirectory(atPath: configDir, withIntermediateDirectories: true)
        try "colour = blue\n".write(toFile: configDir + "/handoffd.conf", atomically: true, encoding: .utf8)
        try await daemon.start(waitUntilReady: false)
        await daemon.process?.exit()
        #expect(daemon.process?.terminationStatus != 0)
        #expect(daemon.log().contains("unknown setting \"colour\""), "\(daemon.log())")
        #expect(daemon.log().contains("handoffd.conf:1"))
    }
}
