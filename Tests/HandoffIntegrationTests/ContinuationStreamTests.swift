import Foundation
import HandoffClient
import HandoffCore
import NIOCore
import HandoffTestSupport
import Testing

/// Continuation streams between two namespace workstations, through both daemons and
/// mutual TLS: whole files, request and response with half-close, an origin that dies,
/// a slow reader, and every refusal. Root only (CI is root).
extension WorkstationTests {
@Suite struct ContinuationStreamTests {
    /// Two paired workstations; `extraA` are handoffd flags for the origin.
    func withPair(_ extraA: [String] = [], _ body: (NetnsRun) async throws -> Void) async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a", extraA)
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            try await body(net)
        }
    }

    func waitForOffer(_ net: NetnsRun, _ type: String) async throws {
        try await eventually(10, "the offer of \(type) to reach b") {
            try await net.ctl("b", "list").stdout.contains(type)
        }
    }

    func sha256(_ net: NetnsRun, _ path: String) async throws -> String {
        let r = try await net.exec("a", ["sha256sum", path])
        guard r.status == 0, let hash = r.stdout.split(separator: " ").first else { throw TestFailure("sha256sum: \(r)") }
        return String(hash)
    }

    @Test func fileServedByTheDaemonArrivesWhole() async throws {
        try await withPair { net in
            let source = net.directory + "/source.bin"
            // The file is read when the stream opens, not at become-current: what is
            // there then is what arrives.
            try Data("placeholder".utf8).write(to: URL(fileURLWithPath: source))
            let made = try await net.ctl("a", "become-current", "--type", "org.example.video.watch", "--title", "Film", "--stream-file", source)
            #expect(made.status == 0, "\(made)")
            let fill = try await net.exec("a", ["/bin/sh", "-c", "head -c 268435456 /dev/urandom > \(source).new && mv \(source).new \(source)"])
            #expect(fill.status == 0, "\(fill)")
            try await waitForOffer(net, "org.example.video.watch")
            let target = net.directory + "/received.bin"
            let r = try await net.ctl("b", "continue", "--stream-to", target)
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("stream: 268435456 bytes received into \(target)"), "\(r)")
            #expect(try await sha256(net, target) == (try await sha256(net, source)))
            // Nothing half-written is left beside it.
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: net.directory).filter { $0.contains(".handoff-") }
            #expect(leftovers.isEmpty, "\(leftovers)")
            // Both daemons saw it end cleanly, and b's handoffd wrote the file itself (`into`).
            #expect(try String(contentsOfFile: net.logPath("a"), encoding: .utf8).contains("continuation stream ended"))
            let logB = try String(contentsOfFile: net.logPath("b"), encoding: .utf8)
            #expect(logB.contains("continuation stream ended"))
            #expect(logB.contains("received.bin.handoff-"), "b's handoffd did not write the file: \(logB)")
        }
    }

    /// `into` through the client library: handoffd writes what the origin sends into the
    /// app's file, the app hears how far it got and then the end, never the bytes.
    @Test func aStreamWrittenByHandoffdIntoTheAppsFile() async throws {
        try await withPair { net in
            let source = net.directory + "/source.bin"
            let fill = try await net.exec("a", ["/bin/sh", "-c", "head -c 41943040 /dev/urandom > \(source)"])
            #expect(fill.status == 0, "\(fill)")
            _ = try await net.ctl("a", "become-current", "--type", "org.example.video.watch", "--stream-file", source)
            try await waitForOffer(net, "org.example.video.watch")
            let client = HandoffClient(socketPath: net.socket("b"))
            let id = try await client.continueActivity(type: "org.example.video.watch").record.activity.id.rawValue
            let target = net.directory + "/into.bin"
            #expect(FileManager.default.createFile(atPath: target, contents: nil))
            let counts = try await client.withStream(toActivity: id, into: target) { stream in
                #expect(stream.info.length == 41_943_040)
                try await stream.writer.finish()
                var counts: [Int64] = []
                while let delivery = try await stream.reader.next() {
                    guard case .written(let n) = delivery else { throw TestFailure("bytes arrived on a stream handoffd writes") }
                    counts.append(n)
                }
                return counts
            }
            #expect(counts.last == 41_943_040)
            #expect(counts.count >= 5, "progress along the way: \(counts)")
            #expect(counts == counts.sorted())
            #expect(try await sha256(net, target) == (try await sha256(net, source)))

            // What handoffd does not write into: a file with something in it (left as it
            // was), a symbolic link; a path that is not absolute is no request at all.
            let full = net.directory + "/full.bin"
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: full))
            let link = net.directory + "/link.bin"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            for path in [full, link] {
                let error = await #expect(throws: HandoffClientError.self, "\(path)") {
                    try await client.withStream(toActivity: id, into: path) { _ in }
                }
                guard case .stream(let code, let message)? = error else { Issue.record("\(String(describing: error))"); continue }
                #expect(code == "write_failed" && message.contains(path), "\(message)")
            }
            #expect(try String(contentsOfFile: full, encoding: .utf8) == "keep me")
            let relative = await #expect(throws: HandoffClientError.self) {
                try await client.withStream(toActivity: id, into: "into.bin") { _ in }
            }
            guard case .api(let e)? = relative else { Issue.record("\(String(describing: relative))"); return }
            #expect(e.status == 400 && e.message.contains("absolute path"), "\(e)")
            // /dev/null is fine, and the origin serves the next stream as before.
            let r = try await net.ctl("b", "continue", "--id", id, "--stream-to", "/dev/null")
            #expect(r.status == 0 && r.stdout.contains("41943040 bytes received"), "\(r)")
        }
    }

    /// The continuing side's disk fills up while handoffd writes the stream: the stream
    /// fails with the reason on both sides, and no partial file is left.
    @Test(.enabled(if: getuid() == 0, "needs root to mount a small tmpfs"))
    func aFullDiskFailsTheStreamOnBothSides() async throws {
        try await withPair { net in
            let source = net.directory + "/app-data.bin"
            _ = try await net.exec("a", ["/bin/sh", "-c", "head -c 16777216 /dev/urandom > \(source)"])
            let ownerLog = net.directory + "/owner.log"
            let owner = try await net.spawn("a", log: ownerLog, [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.bulk", "--attach",
                "--stream-exec", "cat \(source)",
            ])
            defer { net.stop(owner, SIGKILL) }
            try await waitForOffer(net, "org.example.bulk")
            let small = net.directory + "/small"
            let mounted = try await net.exec("b", ["/bin/sh", "-c", "mkdir -p \(small) && mount -t tmpfs -o size=2048k tmpfs \(small)"])
            #expect(mounted.status == 0, "\(mounted)")
            defer { Task { _ = try? await net.exec("b", ["umount", "-l", small]) } }
            let r = try await net.ctl("b", "continue", "--stream-to", small + "/out.bin")
            #expect(r.status == 1, "\(r)")
            #expect(r.stderr.contains("No space left on device"), "\(r)")
            let left = try await net.exec("b", ["ls", "-A", small])
            #expect(left.stdout.isEmpty, "a failed stream leaves no file: \(left)")
            let heard: Void? = try? await eventually(5, "the origin app to hear why") {
                let text = (try? String(contentsOfFile: ownerLog, encoding: .utf8)) ?? ""
                return text.contains("stream to ws-b failed") && text.contains("No space left on device")
            }
            #expect(heard != nil, "\((try? String(contentsOfFile: ownerLog, encoding: .utf8)) ?? "")")
            // Both daemons go on: the next stream, to /dev/null, arrives whole.
            let again = try await net.ctl("b", "continue", "--stream-to", "/dev/null")
            #expect(again.status == 0 && again.stdout.contains("16777216 bytes received"), "\(again)")
        }
    }

    @Test func requestAndResponseWithHalfClose() async throws {
        try await withPair { net in
            // The origin answers only once the request has ended: sha256sum reads to EOF.
            let owner = try await net.spawn("a", log: net.directory + "/owner.log", [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.hash", "--attach",
                "--stream-exec", #"sha256sum | cut -c1-64; echo "for $HANDOFF_STREAM_DEVICE""#,
            ])
            defer { net.stop(owner, SIGKILL) }
            try await waitForOffer(net, "org.example.hash")
            let request = net.directory + "/request.bin"
            let r0 = try await net.exec("a", ["/bin/sh", "-c", "head -c 3000000 /dev/urandom > \(request)"])
            #expect(r0.status == 0)
            let expected = try await sha256(net, request)
            let r = try await net.ctl("b", "continue", "--stream-from", request, "--stream-to", "-")
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout == "\(expected)\nfor ws-b\n", "\(r)")
            #expect(r.stderr.contains("continued from ws-a"), "people's words go to stderr when the stream has stdout")
            try await eventually(5, "the owner to report the stream") {
                ((try? String(contentsOfFile: net.directory + "/owner.log", encoding: .utf8)) ?? "").contains("3000000 received")
            }
        }
    }

    /// Bulk from an app at the origin (not a file the daemon reads): what `cat` writes
    /// arrives whole, through handoffctl's pipes, both daemons and the relay.
    @Test func bulkFromAnAttachedAppArrivesWhole() async throws {
        try await withPair { net in
            let source = net.directory + "/app-data.bin"
            let made = try await net.exec("a", ["/bin/sh", "-c", "head -c 67108864 /dev/urandom > \(source)"])
            #expect(made.status == 0)
            let owner = try await net.spawn("a", log: net.directory + "/owner.log", [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.bulk", "--attach",
                "--stream-exec", "cat \(source)",
            ])
            defer { net.stop(owner, SIGKILL) }
            try await waitForOffer(net, "org.example.bulk")
            let target = net.directory + "/app-received.bin"
            let r = try await net.ctl("b", "continue", "--stream-to", target)
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("stream: 67108864 bytes received"), "\(r)")
            #expect(try await sha256(net, target) == (try await sha256(net, source)))
            // handoffctl handed cat's pipes to handoffd, which moved the bytes (§15.8).
            let ownerLog = (try? String(contentsOfFile: net.directory + "/owner.log", encoding: .utf8)) ?? ""
            #expect(ownerLog.contains("handoffd moved the bytes"), "\(ownerLog)")
        }
    }

    /// Through the client library: both directions interleave before either ends; each
    /// side's end reaches the other after everything it sent.
    @Test func bothDirectionsInterleaveThroughTheClientLibrary() async throws {
        try await withPair { net in
            let owner = try await net.spawn("a", log: net.directory + "/owner.log", [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.echo", "--attach", "--stream-exec", "cat",
            ])
            defer { net.stop(owner, SIGKILL) }
            try await waitForOffer(net, "org.example.echo")
            let client = HandoffClient(socketPath: net.socket("b"))
            let continued = try await client.continueActivity(type: "org.example.echo")
            let echoed = try await client.withStream(toActivity: continued.record.activity.id.rawValue) { stream in
                #expect(stream.info.device.name == "ws-a")
                #expect(stream.info.length == nil)
                var got: [UInt8] = []
                for round in 0..<20 {
                    let ping = Array("ping \(round)\n".utf8)
                    try await stream.writer.write(ping)
                    // cat echoes each line before anything is ended.
                    while got.count < (0...round).map({ "ping \($0)\n".utf8.count }).reduce(0, +) {
                        guard let bytes = try await stream.reader.read() else { throw TestFailure("ended early") }
                        got += bytes.readableBytesView
                    }
                }
                try await stream.writer.finish()
                // Our end reached cat (stdin closed), it exited, and its end came back.
                #expect(try await stream.reader.read() == nil)
                return got
            }
            #expect(String(decoding: echoed, as: UTF8.self) == (0..<20).map { "ping \($0)\n" }.joined())
        }
    }

    @Test func originDyingMidStreamIsAnErrorNotAHang() async throws {
        try await withPair { net in
            // An endless, slow origin: the stream is mid-flight whenever we pull the plug.
            let ownerLog = net.directory + "/owner.log"
            let owner = try await net.spawn("a", log: ownerLog, [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.live", "--attach",
                "--stream-exec", "while :; do head -c 65536 /dev/zero; sleep 0.05; done",
            ])
            defer { net.stop(owner, SIGKILL) }
            try await waitForOffer(net, "org.example.live")
            // Streams b's handoffd has opened towards its app (it logs each once the origin accepted).
            func openedAtB() -> Int {
                ((try? String(contentsOfFile: net.logPath("b"), encoding: .utf8)) ?? "").split(separator: "\n")
                    .filter { $0.contains("continuation stream opened") && $0.contains("side=continuing") }.count
            }
            let log1 = net.directory + "/continue1.log"
            let reader = try await net.spawn("b", log: log1, [try TestEnvironment.binary("handoffctl"), "continue", "--stream-to", "/dev/null"])
            try await eventually(10, "the stream to start") {
                ((try? String(contentsOfFile: ownerLog, encoding: .utf8)) ?? "").contains("stream requested by ws-b")
            }
            try await eventually(10, "the stream to be open end to end") { openedAtB() >= 1 }
            // The origin app dies: the continuing side hears the stream was cut.
            net.stop(owner, SIGKILL)
            let status1 = try await net.wait(reader, timeout: 5)
            #expect(status1 != nil && status1 != 0, "continue must fail within 5 s, got \(String(describing: status1))")
            let text1 = try String(contentsOfFile: log1, encoding: .utf8)
            #expect(text1.contains("the continuation stream failed"), "\(text1)")

            // Again, and this time the origin's handoffd is killed.
            let owner2 = try await net.spawn("a", log: net.directory + "/owner2.log", [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.live2", "--attach",
                "--stream-exec", "while :; do head -c 65536 /dev/zero; sleep 0.05; done",
            ])
            defer { net.stop(owner2, SIGKILL) }
            try await waitForOffer(net, "org.example.live2")
            let log2 = net.directory + "/continue2.log"
            let reader2 = try await net.spawn("b", log: log2, [
                try TestEnvironment.binary("handoffctl"), "continue", "--type", "org.example.live2", "--stream-to", net.directory + "/partial.bin",
            ])
            try await eventually(10, "the second stream to start") {
                ((try? String(contentsOfFile: net.directory + "/owner2.log", encoding: .utf8)) ?? "").contains("stream requested by ws-b")
            }
            try await eventually(10, "the second stream to be open end to end") { openedAtB() >= 2 }
            await net.kill("a")
            let status2 = try await net.wait(reader2, timeout: 5)
            #expect(status2 != nil && status2 != 0, "continue must fail within 5 s, got \(String(describing: status2))")
            let text2 = try String(contentsOfFile: log2, encoding: .utf8)
            #expect(text2.contains("the continuation stream failed"), "\(text2)")
            // A failed stream leaves no file that looks whole.
            #expect(!FileManager.default.fileExists(atPath: net.directory + "/partial.bin"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: net.directory).filter { $0.contains(".handoff-") }.isEmpty)
        }
    }

    @Test func aSlowReaderSlowsTheOriginAndMemoryStaysBounded() async throws {
        try await withPair { net in
            let source = net.directory + "/big.bin"
            let made = try await net.exec("a", ["/bin/sh", "-c", "head -c 1073741824 /dev/zero > \(source)"])
            #expect(made.status == 0)
            _ = try await net.ctl("a", "become-current", "--type", "org.example.big", "--stream-file", source)
            try await waitForOffer(net, "org.example.big")
            let pidA = try #require(net.daemons["a"]), pidB = try #require(net.daemons["b"])
            let before = (NetnsRun.residentBytes(pidA), NetnsRun.residentBytes(pidB))
            // About 8 MB/s: 1 GB would take two minutes.
            let ctl = try TestEnvironment.binary("handoffctl")
            let slow = try await net.spawn("b", log: net.directory + "/slow.log", ["/bin/sh", "-c",
                "\(ctl) continue --stream-to - | while dd bs=65536 count=4 iflag=fullblock of=/dev/null 2>/dev/null; do sleep 0.03; done"])
            defer { net.stop(slow, SIGKILL) }
            try await eventually(10, "the stream to start") {
                try String(contentsOfFile: net.logPath("a"), encoding: .utf8).contains("continuation stream opened")
            }
            var peak = before
            // Time is the measure here: resident memory sampled over 4 s at the reader's pace
            // (about 32 MB through), long enough for an unbounded buffer to show.
            for _ in 0..<16 {
                try await Task.sleep(nanoseconds: 250_000_000)
                peak = (max(peak.0, NetnsRun.residentBytes(pidA)), max(peak.1, NetnsRun.residentBytes(pidB)))
            }
            // Still going (the reader sets the pace), and neither daemon holds the file.
            #expect(try await net.wait(slow, timeout: 0.1) == nil, "the slow stream ended early")
            let growth = (peak.0 - before.0, peak.1 - before.1)
            #expect(growth.0 < 32 << 20, "origin grew by \(growth.0 >> 20) MiB")
            #expect(growth.1 < 32 << 20, "continuing side grew by \(growth.1 >> 20) MiB")
        }
    }

    /// The origin reads a file on the thread pool faster than TLS can send it on the event
    /// loop; with the origin's daemon on one CPU, the chunks read ahead used to wait in
    /// memory (over 1 GiB of a release build's for a 1 GiB file). The peak while the whole
    /// file crosses at full speed stays near what the daemon had before. A debug build
    /// reads more slowly than it encrypts and stays low either way; `PeerDataWriterTests`
    /// holds the bound itself.
    @Test func aFileReadFasterThanItIsSentDoesNotPileUpAtTheOrigin() async throws {
        try await withPair { net in
            let source = net.directory + "/fast.bin"
            let made = try await net.exec("a", ["/bin/sh", "-c", "head -c 1073741824 /dev/urandom > \(source)"])
            #expect(made.status == 0, "\(made)")
            _ = try await net.ctl("a", "become-current", "--type", "org.example.fast", "--stream-file", source)
            try await waitForOffer(net, "org.example.fast")
            let pidA = try #require(net.daemons["a"])
            // Every thread of a's handoffd on one CPU: the event loop and the pool's readers take turns.
            let pinned = try await CommandLineTool.run("/usr/bin/taskset", ["-a", "-p", "-c", "0", String(pidA)], environment: net.environment)
            #expect(pinned.status == 0, "\(pinned)")
            let before = NetnsRun.peakResidentBytes(pidA)
            let r = try await net.ctl("b", "continue", "--stream-to", "/dev/null")
            #expect(r.status == 0 && r.stdout.contains("1073741824 bytes"), "\(r)")
            let growth = NetnsRun.peakResidentBytes(pidA) - before
            #expect(growth < 64 << 20, "the origin's peak grew by \(growth >> 20) MiB")
        }
    }

    @Test func refusalsSayWhyOnBothSides() async throws {
        try await withPair(["--stream-accept-timeout-ms", "1500", "--max-streams-per-peer", "1"]) { net in
            // 1. The activity does not support streams.
            _ = try await net.ctl("a", "become-current", "--type", "org.example.plain")
            try await waitForOffer(net, "org.example.plain")
            let r1 = try await net.ctl("b", "continue", "--stream-to", net.directory + "/x.bin")
            #expect(r1.status == 1, "\(r1)")
            #expect(r1.stderr.contains("does not support continuation streams"), "\(r1)")
            #expect(!FileManager.default.fileExists(atPath: net.directory + "/x.bin"))
            #expect(try String(contentsOfFile: net.logPath("a"), encoding: .utf8).contains("streams_unsupported"))

            // 2. The owner refuses (an attached owner without --stream-exec).
            let ownerLog = net.directory + "/refuser.log"
            let refuser = try await net.spawn("a", log: ownerLog, [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.refuse", "--attach", "--streams",
            ])
            defer { net.stop(refuser, SIGKILL) }
            try await waitForOffer(net, "org.example.refuse")
            let r2 = try await net.ctl("b", "continue", "--stream-to", "/dev/null")
            #expect(r2.status == 1, "\(r2)")
            #expect(r2.stderr.contains("refused the stream"), "\(r2)")
            try await eventually(5, "the owner to say it refused") {
                ((try? String(contentsOfFile: ownerLog, encoding: .utf8)) ?? "").contains("refused a stream from ws-b")
            }
            net.stop(refuser, SIGKILL)

            // 3. The owner never answers: an app's session that ignores stream-requested.
            let client = HandoffClient(socketPath: net.socket("a"))
            let session = try await client.openSession()
            defer { session.close() }
            var draft = ActivityDraft(activityType: "org.example.silent")
            draft.supportsContinuationStreams = true
            _ = try await client.becomeCurrent(draft, session: session.token)
            try await waitForOffer(net, "org.example.silent")
            let started = Date()
            let r3 = try await net.ctl("b", "continue", "--stream-to", "/dev/null")
            #expect(r3.status == 1, "\(r3)")
            #expect(r3.stderr.contains("did not take the stream within 1.5 s"), "\(r3)")
            #expect(Date().timeIntervalSince(started) < 10)
            var asked = false
            for try await event in session.events {
                if case .streamRequested(_, let streamID, let device) = event {
                    #expect(device.name == "ws-b")
                    // Too late now: the id is spent.
                    await #expect(throws: HandoffClientError.self) { try await client.refuseStream(streamID) }
                    asked = true
                    break
                }
            }
            #expect(asked)

            // 3b. The owner's command fails: what it printed arrives, then the failure, not an end.
            let failing = try await net.spawn("a", log: net.directory + "/failing.log", [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.failing", "--attach",
                "--stream-exec", "echo partial; exit 3",
            ])
            defer { net.stop(failing, SIGKILL) }
            try await waitForOffer(net, "org.example.failing")
            let r3b = try await net.ctl("b", "continue", "--stream-to", net.directory + "/failing.out")
            #expect(r3b.status == 1, "\(r3b)")
            #expect(r3b.stderr.contains("exited with status 3"), "\(r3b)")
            #expect(!FileManager.default.fileExists(atPath: net.directory + "/failing.out"), "a failed stream leaves no file")
            net.stop(failing, SIGKILL)

            // 4. Beyond the per-peer cap (1 here): the second stream is refused while the first runs.
            let live = try await net.spawn("a", log: net.directory + "/live.log", [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.live", "--attach",
                "--stream-exec", "while :; do head -c 4096 /dev/zero; sleep 0.1; done",
            ])
            defer { net.stop(live, SIGKILL) }
            try await waitForOffer(net, "org.example.live")
            let first = try await net.spawn("b", log: net.directory + "/first.log", [try TestEnvironment.binary("handoffctl"), "continue", "--stream-to", "/dev/null"])
            defer { net.stop(first, SIGKILL) }
            try await eventually(10, "the first stream to start") {
                ((try? String(contentsOfFile: net.directory + "/live.log", encoding: .utf8)) ?? "").contains("stream requested")
            }
            let r4 = try await net.ctl("b", "continue", "--stream-to", "/dev/null")
            #expect(r4.status == 1, "\(r4)")
            #expect(r4.stderr.contains("streams from you are open already"), "\(r4)")

            // 5. Nothing continued with that id: the continuing daemon says so, in an error
            // frame right after the 101 (which once got lost in the client's upgrade).
            for _ in 0..<10 {
                let e = await #expect(throws: HandoffClientError.self) {
                    try await HandoffClient(socketPath: net.socket("b")).withStream(toActivity: ActivityID.random().rawValue) { _ in }
                }
                guard case .stream(let code, _)? = e else { Issue.record("not the reason: \(String(describing: e))"); break }
                #expect(code == "not_offered")
            }
        }
    }
}
}
