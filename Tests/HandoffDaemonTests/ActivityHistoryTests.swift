@testable import HandoffDaemon
import HandoffCore
import HandoffControlAPI
import Logging
import NIOCore
import HandoffTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// handoffd's side of the history: the real `handoff-history` helper (built next to the
/// test binary), started when needed, ended when quiet, started again when it died.
@Suite("Activity history through its helper")
struct ActivityHistoryTests {
    let desk = PeerDevice(id: "DESKDESK-1", name: "desk")
    let t0 = SystemClock.now()

    func offer(_ title: String, search: Bool = true) -> ActivitySummary {
        let a = Activity(id: .random(), activityType: "org.example.edit", title: title, webpageURL: "https://example.org/",
                         keywords: ["kw"], eligibleForSearch: search, createdAt: t0, origin: DeviceRef(name: "desk"))
        return ActivitySummary(a, payloadSize: 10)
    }

    func directory() -> String {
        let dir = "/tmp/hhistd-\(UInt32.random(in: 0...UInt32.max))"
        _ = mkdir(dir, 0o700)
        return dir
    }

    func remove(_ dir: String) {
        for f in ["history.sqlite", "history.sqlite-wal", "history.sqlite-shm"] { _ = unlink("\(dir)/\(f)") }
        _ = rmdir(dir)
    }

    func alive(_ pid: pid_t) -> Bool {
        // A zombie is gone for this purpose only once reaped: /proc/PID disappears then.
        access("/proc/\(pid)", F_OK) == 0
    }

    @Test func startedWhenNeededAndEndedWhenQuiet() async throws {
        let dir = directory()
        defer { remove(dir) }
        let h = ActivityHistory(directory: dir, retentionDays: 30, idleTimeout: .milliseconds(300), logger: Logger(label: "test"))
        #expect(await h.helperPID == nil, "not at start")
        await h.record(offer("Not searchable", search: false), device: desk, local: true)
        #expect(await h.helperPID == nil, "not for an offer that is not kept")
        await h.record(offer("Quarterly plan"), device: desk, local: true)
        let first = try #require(await h.helperPID)
        #expect(try await h.search(HistoryQuery(text: "quarterly")).map(\.title) == ["Quarterly plan"])
        try await eventually("the helper to end after its quiet period") { await h.helperPID == nil && !alive(first) }
        // Asked again: a new helper, the same history (it is on disk).
        #expect(try await h.count() == 1)
        let second = try #require(await h.helperPID)
        #expect(second != first)
        await h.stop()
        try await eventually("the helper to end at stop") { !alive(second) }
    }

    @Test func notedOffersAreWrittenInOrderAndAllOfThemBeforeAStop() async throws {
        let dir = directory()
        defer { remove(dir) }
        let h = ActivityHistory(directory: dir, retentionDays: 30, logger: Logger(label: "test"))
        await h.start()
        for i in 0..<20 { h.note(offer("Noted \(i)"), device: desk, local: true) }
        h.note(offer("Not searchable", search: false), device: desk, local: true)
        await h.stop()  // at once: what was queued is written first
        let again = ActivityHistory(directory: dir, retentionDays: 30, logger: Logger(label: "test"))
        let titles = try await again.search(HistoryQuery(text: "noted", limit: 50)).map(\.title)
        #expect(titles == (0..<20).reversed().map { "Noted \($0)" }, "all of them, newest first")
        await again.stop()
    }

    @Test func aHelperThatDiedIsStartedAgain() async throws {
        let dir = directory()
        defer { remove(dir) }
        let h = ActivityHistory(directory: dir, retentionDays: 30, logger: Logger(label: "test"))
        await h.record(offer("Survives"), device: desk, local: true)
        let pid = try #require(await h.helperPID)
        kill(pid, SIGKILL)
        try await eventually("the killed helper to be reaped") { !alive(pid) }
        #expect(try await h.search(HistoryQuery(text: "survives")).count == 1, "answered by a new helper")
        #expect(await h.helperPID != pid)
        await h.stop()
    }

    @Test func aMissingHelperIsAClearError() async throws {
        let h = ActivityHistory(directory: "/tmp", retentionDays: 30, helperPath: "/nonexistent/handoff-history", logger: Logger(label: "test"))
        do {
            _ = try await h.search(HistoryQuery(text: "x"))
            Issue.record("answered without a helper")
        } catch {
            #expect(error.kind == .unavailable && error.code == "history_unavailable")
            #expect(error.message.contains("scripts/install"), "says what to do: \(error.message)")
        }
        await h.record(offer("Dropped"), device: desk, local: true)  // logged, not thrown
    }

    @Test func aHelperThatNeverAnswersIsKilledAndTheRequestFails() async throws {
        // Reads its input for ever and answers nothing.
        let script = "/tmp/hhist-mute-\(UInt32.random(in: 0...UInt32.max))"
        let f = try #require(fopen(script, "w"))
        fputs("#!/bin/sh\nexec cat >/dev/null\n", f)
        fclose(f)
        chmod(script, 0o755)
        defer { unlink(script) }
        let h = ActivityHistory(directory: "/tmp", retentionDays: 30, helperPath: script, requestTimeout: .milliseconds(300),
                                logger: Logger(label: "test"))
        let started = NIODeadline.now().uptimeNanoseconds
        do {
            _ = try await h.count()
            Issue.record("a mute helper answered")
        } catch {
            #expect(error.code == "history_unavailable", "\(error)")
            // The deadline given, not the 10 s default, ended it (a wall-clock bound here
            // failed once on a loaded machine: 9.9 s for a 0.3 s deadline).
            #expect(error.message.contains("did not answer within 0.3 s"), "\(error)")
        }
        #expect(NIODeadline.now().uptimeNanoseconds - started < 60_000_000_000, "the request does not hang")
        #expect(await h.helperPID == nil, "the mute helper is not kept")
        await h.stop()
    }
}
