@testable import HandoffDaemon
import Testing

/// Where handoffd looks for `handoff-history`: next to itself (a build folder,
/// scripts/install), then in `PREFIX/libexec/handoff` for a daemon in `PREFIX/bin` (the
/// Debian package).
@Suite("History helper path")
struct HistoryHelperPathTests {
    @Test func nextToTheDaemonFirstThenLibexec() {
        #expect(HistoryHelperProcess.candidatePaths(executable: "/usr/bin/handoffd")
                == ["/usr/bin/handoff-history", "/usr/libexec/handoff/handoff-history"])
        #expect(HistoryHelperProcess.candidatePaths(executable: "/home/u/.local/bin/handoffd")
                == ["/home/u/.local/bin/handoff-history", "/home/u/.local/libexec/handoff/handoff-history"])
    }

    @Test func aBuildFolderHasNoLibexec() {
        #expect(HistoryHelperProcess.candidatePaths(executable: "/src/.build/debug/handoffd") == ["/src/.build/debug/handoff-history"])
        #expect(HistoryHelperProcess.candidatePaths(executable: "handoffd") == ["handoff-history"])
    }
}
