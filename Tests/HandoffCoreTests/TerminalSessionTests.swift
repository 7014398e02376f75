import HandoffCore
import Testing

/// `handoff.terminal`'s userInfo, checked as input from a peer, and the ssh command made
/// of it: what a hostile origin sends starts nothing.
struct TerminalSessionTests {
    func info(_ change: (inout UserInfo) -> Void = { _ in }) -> UserInfo {
        var i: UserInfo = ["host": .string("desk.example.org"), "user": .string("ann"), "directory": .string("/srv/proj"),
                           "tmuxSession": .string("work")]
        change(&i)
        return i
    }

    @Test func aSessionRoundTripsAndAttachesToTmux() throws {
        let t = try TerminalSession(userInfo: info())
        #expect(t == TerminalSession(host: "desk.example.org", user: "ann", directory: "/srv/proj", tmuxSession: "work"))
        #expect(try TerminalSession(userInfo: t.userInfo) == t)
        #expect(t.sshArguments() == ["ssh", "-t", "-l", "ann", "--", "desk.example.org", "tmux new-session -A -s work -c /srv/proj"])
        #expect(t.commandLine == "ssh -t -l ann -- desk.example.org 'tmux new-session -A -s work -c /srv/proj'")
    }

    @Test func withoutTmuxALoginShellInTheDirectory() throws {
        let t = try TerminalSession(userInfo: info { $0["tmuxSession"] = nil; $0["port"] = .integer(2222); $0["directory"] = .string("/home/ann/My Notes (old)") })
        #expect(t.sshArguments() == ["ssh", "-t", "-l", "ann", "-p", "2222", "--", "desk.example.org",
                                     #"exec sh -c 'cd -- "$1" && exec "${SHELL:-/bin/sh}" -l' sh '/home/ann/My Notes (old)'"#])
    }

    @Test(arguments: [
        ("host", PropertyValue.string("-oProxyCommand=touch /tmp/pwned")), ("host", .string("a b")), ("host", .string("desk;reboot")),
        ("host", .string("")), ("host", .string("ann@desk")), ("host", .string(String(repeating: "a", count: 64) + ".org")), ("host", .integer(1)),
        ("user", .string("-oProxyCommand=x")), ("user", .string("ann$(id)")), ("user", .string(String(repeating: "a", count: 33))),
        ("port", .integer(0)), ("port", .integer(70000)), ("port", .string("22")),
        ("directory", .string("relative/path")), ("directory", .string("/srv/$(touch /tmp/pwned)")), ("directory", .string("/srv/a;reboot")),
        ("directory", .string("/srv/proj\nreboot")), ("directory", .string("/srv/../etc")), ("directory", .string("/srv/./x")),
        ("directory", .string("/srv//x")), ("directory", .string("/" + String(repeating: "d", count: 10_000))), ("directory", .string("/a`id`")),
        ("tmuxSession", .string("work;reboot")), ("tmuxSession", .string("$(id)")), ("tmuxSession", .string("")), ("tmuxSession", .string("a:b")),
        ("tmuxSession", .string("work\nx")), ("tmuxSession", .string(String(repeating: "s", count: 65))),
    ] as [(String, PropertyValue)])
    func hostileFieldsAreRefusedByName(_ key: String, _ value: PropertyValue) {
        #expect(throws: ValidationError.self) { try TerminalSession(userInfo: info { $0[key] = value }) }
        do { _ = try TerminalSession(userInfo: info { $0[key] = value }) } catch { #expect(error.field == "userInfo.\(key)") }
    }

    @Test func aHostAndADirectoryAreRequired() {
        for key in ["host", "directory"] {
            #expect(throws: ValidationError.self) { try TerminalSession(userInfo: info { $0[key] = nil }) }
        }
    }

    @Test func addressesAndTheRootAreFine() throws {
        #expect(try TerminalSession(userInfo: info { $0["host"] = .string("fe80::1"); $0["directory"] = .string("/") }).host == "fe80::1")
        #expect(try TerminalSession(userInfo: info { $0["host"] = .string("192.0.2.7") }).host == "192.0.2.7")
        #expect(try TerminalSession(userInfo: info { $0["host"] = .string("desk.") }).host == "desk.")
    }

    @Test func quotingIsPOSIX() {
        #expect(TerminalSession.quoted("plain-word_1.2") == "plain-word_1.2")
        #expect(TerminalSession.quoted("") == "''")
        #expect(TerminalSession.quoted("it's") == "'it'\\''s'")
        #expect(TerminalSession.quoted("$(id)") == "'$(id)'")
        #expect(TerminalSession.quoted("é") == "'é'")
    }

    @Test func aSyncedFolderRoundTripsAndHostileOnesAreRefused() throws {
        let folder = SyncedFolderPath(root: SyncedRootID(kind: "syncthing", id: "abcd-1234"), path: "notes/x y")
        let t = try TerminalSession(userInfo: info { $0["syncedFolder"] = folder.propertyValue })
        #expect(t.syncedFolder == folder)
        #expect(try TerminalSession(userInfo: t.userInfo) == t)
        #expect(folder.locate(under: "/home/bo/Sync") == "/home/bo/Sync/notes/x y")
        let root = SyncedFolderPath(root: SyncedRootID(kind: "configured", id: "proj"), path: "")
        #expect(try TerminalSession(userInfo: info { $0["syncedFolder"] = root.propertyValue }).syncedFolder?.locate(under: "/p") == "/p")
        for bad: PropertyValue in [
            .string("x"), .dictionary(["kind": .string("syncthing"), "id": .string("a")]),
            .dictionary(["kind": .string("dropbox"), "id": .string("a"), "path": .string("x")]),
            .dictionary(["kind": .string("syncthing"), "id": .string(""), "path": .string("x")]),
            .dictionary(["kind": .string("syncthing"), "id": .string("a"), "path": .string("../etc")]),
            .dictionary(["kind": .string("syncthing"), "id": .string("a"), "path": .string("/etc")]),
            .dictionary(["kind": .string("syncthing"), "id": .string("a"), "path": .string("a//b")]),
        ] {
            #expect(throws: ValidationError.self, "\(bad)") { try TerminalSession(userInfo: info { $0["syncedFolder"] = bad }) }
        }
    }

    @Test func moshQuotesNothingItselfAndCarriesThePortInItsSshOption() throws {
        let t = try TerminalSession(userInfo: info { $0["port"] = .integer(2222) })
        #expect(t.moshArguments() == ["mosh", "--ssh=ssh -p 2222", "--", "ann@desk.example.org",
                                      "tmux", "new-session", "-A", "-s", "work", "-c", "/srv/proj"])
        let plain = try TerminalSession(userInfo: info { $0["tmuxSession"] = nil; $0["user"] = nil; $0["directory"] = .string("/srv/a b") })
        #expect(plain.moshArguments() == ["mosh", "--", "desk.example.org", "sh", "-c", #"cd -- "$1" && exec "${SHELL:-/bin/sh}" -l"#, "sh", "/srv/a b"])
    }

    @Test func osc7ReportsGiveTheHostAndTheDirectory() {
        #expect(TerminalSession.osc7("file://desk/home/ann/My%20Notes")! == ("desk", "/home/ann/My Notes"))
        #expect(TerminalSession.osc7("\u{1b}]7;file://localhost/srv/proj/\u{07}")! == (nil, "/srv/proj"))
        #expect(TerminalSession.osc7("\u{1b}]7;file:///srv/%C3%A9t%C3%A9\u{1b}\\")! == (nil, "/srv/été"))
        #expect(TerminalSession.osc7("file:///")! == (nil, "/"))
        for bad in ["http://desk/x", "file://desk", "file:///a%2", "file:///a%zz", "file:///a%00b", "file:///%ff%fe", "/srv/proj"] {
            #expect(TerminalSession.osc7(bad) == nil, "\(bad)")
        }
    }
}
