import HandoffCore
import Testing

/// How a terminal continues, decided from the session and the continuing side's
/// preferences: tmux attaches where it ran, a synced folder opens locally, mosh only when
/// preferred and installed.
struct TerminalContinuationTests {
    let tmux = TerminalSession(host: "desk", user: "ann", directory: "/srv/proj", tmuxSession: "work",
                               syncedFolder: SyncedFolderPath(root: SyncedRootID(kind: "configured", id: "proj"), path: ""))
    var plain: TerminalSession {
        var s = tmux
        s.tmuxSession = nil
        return s
    }

    @Test func sshByDefault() {
        let c = TerminalContinuation(tmux)
        #expect(c.route == .ssh && c.argv == tmux.sshArguments() && c.commandLine == tmux.commandLine && c.directory == nil && c.note == nil)
    }

    @Test func aSyncedFolderOpensLocallyUnlessItRanInTmux() {
        let local = TerminalContinuation(plain, preferences: .init(localDirectory: "/home/bo/proj"))
        #expect(local.route == .local && local.directory == "/home/bo/proj")
        #expect(local.argv == ["sh", "-c", #"cd -- "$1" && exec "${SHELL:-/bin/sh}" -l"#, "sh", "/home/bo/proj"])
        #expect(local.commandLine == "cd -- /home/bo/proj")
        // Its programs and scrollback live where tmux runs: attach there.
        #expect(TerminalContinuation(tmux, preferences: .init(localDirectory: "/home/bo/proj")).route == .ssh)
    }

    @Test func moshWhenPreferredAndInstalledElseSshWithANote() {
        let mosh = TerminalContinuation(tmux, preferences: .init(transport: .mosh, moshInstalled: true))
        #expect(mosh.route == .mosh && mosh.argv == tmux.moshArguments() && mosh.note == nil)
        #expect(mosh.commandLine == "mosh -- ann@desk tmux new-session -A -s work -c /srv/proj")
        let missing = TerminalContinuation(tmux, preferences: .init(transport: .mosh, moshInstalled: false))
        #expect(missing.route == .ssh && missing.note?.contains("mosh is preferred but not installed") == true)
        #expect(TerminalContinuation(tmux, preferences: .init(transport: .ssh, moshInstalled: true)).route == .ssh)
    }

    @Test func jsonRoundTripsAndBadShapesAreRefused() throws {
        for c in [TerminalContinuation(tmux), TerminalContinuation(plain, preferences: .init(localDirectory: "/x")),
                  TerminalContinuation(tmux, preferences: .init(transport: .mosh, moshInstalled: false))] {
            #expect(try TerminalContinuation(json: c.json) == c)
        }
        for bad: JSONValue in [.string("ssh"), .object(["route": .string("telnet"), "argv": .array([.string("x")]), "commandLine": .string("x")]),
                               .object(["route": .string("ssh"), "argv": .array([]), "commandLine": .string("x")]),
                               .object(["route": .string("ssh"), "argv": .array([.integer(1)]), "commandLine": .string("x")]),
                               .object(["route": .string("ssh"), "argv": .array([.string("ssh")])])] {
            #expect(throws: ValidationError.self, "\(bad)") { try TerminalContinuation(json: bad) }
        }
    }
}
