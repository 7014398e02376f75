import HandoffCore
@testable import HandoffDaemon
import Testing

/// The in-process restart for a new identity, without a daemon: what is asked, and what
/// a stop does to it.
@Suite("Daemon restart")
struct DaemonRestartTests {
    @Test func aSecondRenewalGetsTheFirstsFolderAndTheNextRunForgetsBoth() async throws {
        let r = DaemonRestart()
        #expect(try await r.renewIdentity(keptAt: "/s/retired/A") == "/s/retired/A")
        #expect(try await r.renewIdentity(keptAt: "/s/retired/B") == "/s/retired/A", "one renewal per run")
        #expect(r.renewal == "/s/retired/A")
        r.nextRun()
        #expect(r.renewal == nil)
    }

    @Test func aStopWinsOverARenewal() async throws {
        let r = DaemonRestart()
        _ = try await r.renewIdentity(keptAt: "/s/retired/A")
        await r.stop()
        #expect(r.isStopping, "Daemon.run does not start again")
        await #expect(throws: HandoffError.self) { try await r.renewIdentity(keptAt: "/s/retired/B") }
    }
}
