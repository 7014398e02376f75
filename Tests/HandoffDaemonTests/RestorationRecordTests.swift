@testable import HandoffDaemon
import HandoffCore
import Testing

/// When saved state is handed back, and when it is thrown away (seed 002): without files.
@Suite("Restoration record")
struct RestorationRecordTests {
    let t0 = Timestamp(seconds: 1_800_000_000)
    func record() -> RestorationRecord { RestorationRecord(version: "1.2", savedAt: t0, entries: ["Tabs/Editor": .string("x")], continueWith: nil) }

    @Test func theSameVersionGetsItsStateAndAnotherOnlyIfItAcceptsOlder() {
        var r = record()
        #expect(r.restore(version: "1.2", acceptOlder: false, session: nil, at: t0) == .state(older: false))
        r.restored()
        #expect(r.restore(version: "1.3", acceptOlder: true, session: nil, at: t0) == .state(older: true))
        r.restored()
        #expect(r.restore(version: "1.3", acceptOlder: false, session: nil, at: t0) == .discard(reason: "version_changed"))
    }

    @Test func twoLaunchesThatNeverCameUpDiscardTheState() {
        var r = record()
        #expect(r.restore(version: "1.2", acceptOlder: false, session: nil, at: t0) == .state(older: false))
        // The app asks again without having said it was up: the first launch failed.
        #expect(r.restore(version: "1.2", acceptOlder: false, session: nil, at: t0) == .state(older: false))
        #expect(r.failedLaunches == 1)
        #expect(r.restore(version: "1.2", acceptOlder: false, session: nil, at: t0) == .discard(reason: "crash_loop"))
    }

    @Test func aLaunchThatCameUpClearsTheCount() {
        var r = record()
        _ = r.restore(version: "1.2", acceptOlder: false, session: nil, at: t0)
        _ = r.restore(version: "1.2", acceptOlder: false, session: nil, at: t0)
        r.restored()
        #expect(r.failedLaunches == 0)
        #expect(r.restore(version: "1.2", acceptOlder: false, session: nil, at: t0) == .state(older: false))
        #expect(r.restore(version: "1.2", acceptOlder: false, session: nil, at: t0) == .state(older: false), "one failure is not a loop")
    }

    @Test func aSessionThatEndsBeforeTheAppIsUpIsAFailedLaunch() {
        var r = record()
        _ = r.restore(version: "1.2", acceptOlder: false, session: "s1", at: t0)
        let other = r.sessionEnded("other"), own = r.sessionEnded("s1")
        #expect(!other && own)
        #expect(r.failedLaunches == 1 && r.launchStarted == nil)
        _ = r.restore(version: "1.2", acceptOlder: false, session: "s2", at: t0)
        let second = r.sessionEnded("s2")
        #expect(second)
        #expect(r.restore(version: "1.2", acceptOlder: false, session: "s3", at: t0) == .discard(reason: "crash_loop"))
        // After the app said it was up, its session ending is a normal quit.
        var ok = record()
        _ = ok.restore(version: "1.2", acceptOlder: false, session: "s1", at: t0)
        ok.restored()
        let quit = ok.sessionEnded("s1")
        #expect(!quit && ok.failedLaunches == 0)
    }

    @Test func appsAndPathsAreChecked() {
        #expect(throws: ValidationError.self) { try RestorationRecord.validateApp("") }
        #expect(throws: ValidationError.self) { try RestorationRecord.validateApp("a/b") }
        #expect(throws: ValidationError.self) { try RestorationRecord.validateApp("ä") }
        #expect(throws: Never.self) { try RestorationRecord.validateApp("org.example.Editor") }
        for bad: JSONObject in [["": .string("x")], ["Tabs//Editor": .string("x")], ["/Tabs": .string("x")], ["Tabs/": .string("x")],
                                ["Tabs\n": .string("x")], ["Tabs": .object(["$date": .string("not a date")])]] {
            #expect(throws: ValidationError.self, "\(bad)") { try RestorationRecord.validate(entries: bad) }
        }
        #expect(throws: Never.self) { try RestorationRecord.validate(entries: ["Tabs/Nav/Editor": .object(["line": .integer(12)])]) }
    }
}
