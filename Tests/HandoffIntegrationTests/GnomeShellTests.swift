import Foundation
import HandoffClient
import HandoffControlAPI
import HandoffTestSupport
import Testing

/// GNOME Shell itself (43, Debian 12's) as users meet it: handoff's extension loaded by the
/// shell, its panel menu showing what a offers and continuing it on b; the AppIndicator
/// extension showing the tray item; a search typed in the overview reaching the agent's
/// provider. Two namespace workstations; b runs GNOME Shell headless. Root only.
extension WorkstationTests {
@Suite struct GnomeShellTests {
    func withGnomeShell(preset: [String] = [DesktopSession.appIndicatorUUID], enable: [String] = [DesktopSession.extensionUUID],
                        _ body: (NetnsRun, DesktopSession) async throws -> Void) async throws {
        try await NetnsRun.withPairedDesktop { net, desk in
            try desk.addEntry("org.example.Editor.desktop", name: "Editor", lines: [
                "Icon=accessories-text-editor", "X-Handoff-ActivityTypes=org.example.editor.edit-note;",
            ], recordAs: "editor")
            try await desk.startPanelBus()
            try await desk.startAgent(["--no-notifications"])
            try await explained(desk) {
                try await desk.startGnomeShell(preset: preset, enable: enable)
                try await body(net, desk)
            }
        }
    }

    /// `body`, whose failure comes with the extensions' states and the ends of the logs.
    func explained(_ desk: DesktopSession, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            var states: [String] = []
            for uuid in [DesktopSession.unsafeModeUUID, DesktopSession.extensionUUID, DesktopSession.appIndicatorUUID] {
                states.append("\(uuid): \((try? await desk.shellProbe("extension", uuid)).map { "\($0)" } ?? "no answer")")
            }
            let logs = ["agent.log", "gnome-shell.log", "copier.log", "paster.log"].filter { FileManager.default.fileExists(atPath: desk.root + "/" + $0) }.map { name in
                "--- \(name) ---\n" + (((try? String(contentsOfFile: desk.root + "/" + name, encoding: .utf8)) ?? "").split(separator: "\n").suffix(30).joined(separator: "\n"))
            }
            throw TestFailure("\(error)\n" + states.joined(separator: "\n") + "\n" + logs.joined(separator: "\n"))
        }
    }

    /// The extension renders b's presence and follows it as it changes, without polling:
    /// a's offer appears under a's name, a click continues it in its app, a source turned
    /// off from the menu is off, pairing opens and closes from it, a's handoffd killed
    /// leaves nothing to continue, and the agent stopped says so. The shell logs no error.
    @Test func theExtensionShowsWhatIsOfferedAndContinuesIt() async throws {
        try await withGnomeShell { net, desk in
            try await eventually(10, "the menu to show the agent's presence") { try await desk.shellMenu().contains("Nothing to continue") }
            #expect((try await desk.shellProbe("icon") as? [String])?.first == "handoff")
            try await eventually(10, "sources to say the extension shows the presence, and the tray icon is hidden") {
                try await net.ctl("b", "sources").stdout.contains("shown in GNOME's panel by handoff's GNOME Shell extension (the tray icon is hidden")
            }

            let id = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Shopping list"])
            let entry = "Continue \u{201C}Shopping list\u{201D}"
            try await eventually(10, "a's offer in GNOME Shell's menu") { try await desk.shellMenu().contains(entry) }
            let labels = try await desk.shellMenu()
            #expect(labels.contains("From ws-a"), "offers per workstation: \(labels)")
            #expect((try await desk.shellProbe("icon") as? [String])?.first == "handoff-available")
            #expect(try desk.record("editor") == nil, "nothing opens before the user clicks")
            #expect(try await desk.shellProbe("click", entry) as? Bool == true)
            #expect(try await desk.waitForRecord("editor")["argv"] as? [String] == ["handoff:continued/\(id)"])

            // A source switched off in the menu is off for handoffd.
            #expect(try await desk.shellProbe("toggle", "media") as? Bool == true)
            try await eventually(10, "media to be off") {
                let s = try await net.ctl("b", "sources", "--json").stdout
                return s.contains("\"media\"") && (try? JSONSerialization.jsonObject(with: Data(s.utf8)) as? [String: Any]).map { o in
                    ((o["sources"] as? [[String: Any]]) ?? []).contains { $0["name"] as? String == "media" && $0["enabled"] as? Bool == false }
                } == true
            }

            // Pairing opens from the menu, shows where it stands, and stops from it.
            #expect(try await desk.shellProbe("click", "Pair a workstation") as? Bool == true)
            try await eventually(10, "the menu to show pairing") { try await desk.shellMenu().contains("Stop pairing") }
            #expect(try await desk.shellProbe("click", "Stop pairing") as? Bool == true)
            try await eventually(10, "pairing to close") { try await desk.shellMenu().contains("Pair a workstation\u{2026}") }

            // a goes away: its offer leaves the menu at once.
            await net.kill("a", SIGKILL)
            try await eventually(10, "a's offer to leave the menu") { try await desk.shellMenu().contains("Nothing to continue") }
            #expect((try await desk.shellProbe("icon") as? [String])?.first == "handoff")

            // The agent stops: the menu says so, and offers to start it.
            await desk.stopAgent()
            try await eventually(10, "the menu to say the agent is not running") {
                try await desk.shellMenu().contains("Handoff\u{2019}s session agent is not running")
            }
            // It comes back: the menu follows the new agent (its properties read again).
            try await desk.startAgent(["--no-notifications"])
            try await eventually(10, "the menu to show the new agent's presence") { try await desk.shellMenu().contains("Nothing to continue") }
            #expect(desk.gnomeShellErrors.isEmpty, "GNOME Shell logged: \(desk.gnomeShellErrors)")
        }
    }

    /// The AppIndicator extension (Debian's gnome-shell-extension-appindicator) owns the
    /// watcher in GNOME Shell: the agent's tray item registers with it and shows in the
    /// panel, named for screen readers by what it says (`IconAccessibleDesc`), which
    /// follows a's offer. The shell logs no error (it did, before the item had that property).
    /// One icon: once handoff's own extension is enabled the tray item turns passive and
    /// leaves the panel (the extension's icon shows the same presence), still registered;
    /// it is back once the extension is disabled.
    @Test func theAppIndicatorExtensionShowsTheTrayItemUnlessHandoffsDoes() async throws {
        try await withGnomeShell(enable: []) { net, desk in
            try await eventually(15, "the item to register with GNOME Shell's watcher") { try await desk.trayRegistered() }
            try await eventually(10, "the item in GNOME Shell's panel") { try await desk.trayItemsShown() == ["Handoff: nothing to continue"] }
            _ = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Shopping list"])
            let waiting = "Handoff: Continue \u{201C}Shopping list\u{201D} from ws-a"
            try await eventually(10, "the item to say what waits") { try await desk.trayItemsShown() == [waiting] }
            let item = try await desk.probe("item") as? [String: Any]
            #expect((item?["properties"] as? [String: Any])?["IconName"] as? String == "handoff-available")

            // handoff's extension shows the presence: the tray item leaves, one icon stays.
            func status() async throws -> String? {
                ((try await desk.probe("item") as? [String: Any])?["properties"] as? [String: Any])?["Status"] as? String
            }
            try await desk.setExtension(DesktopSession.extensionUUID, enabled: true)
            try await eventually(10, "handoff's extension to show the offer") { try await desk.shellMenu().contains("Continue \u{201C}Shopping list\u{201D}") }
            try await eventually(10, "the tray item to leave GNOME Shell's panel") { try await desk.trayItemsShown().isEmpty }
            #expect(try await status() == "Passive")
            #expect(try await desk.trayRegistered(), "still registered, ready to show again")
            #expect((try await desk.shellProbe("icon") as? [String])?.first == "handoff-available", "the extension's icon says what waits")

            // Disabled again: the tray item is back, saying what waits.
            try await desk.setExtension(DesktopSession.extensionUUID, enabled: false)
            try await eventually(10, "the item back in GNOME Shell's panel") { try await desk.trayItemsShown() == [waiting] }
            #expect(try await status() == "Active")
            #expect(desk.gnomeShellErrors.isEmpty, "GNOME Shell logged: \(desk.gnomeShellErrors)")
        }
    }

    /// Both extensions on from the start, handoff's listed first (as scripts/booted/test-gnome
    /// enables them): no tray item shows beside handoff's icon; handoff's disabled, GNOME
    /// Shell disables and enables again every extension enabled after it, so the
    /// AppIndicator extension makes its items anew, and the tray item shows at once with
    /// what it says.
    @Test func bothExtensionsFromTheStartShowOneIcon() async throws {
        try await withGnomeShell(preset: [DesktopSession.extensionUUID, DesktopSession.appIndicatorUUID], enable: []) { net, desk in
            _ = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Shopping list"])
            try await eventually(10, "handoff's extension to show the offer") { try await desk.shellMenu().contains("Continue \u{201C}Shopping list\u{201D}") }
            try await eventually(15, "the item to register with GNOME Shell's watcher") { try await desk.trayRegistered() }
            try await never(within: 2, because: "the tray item must not show beside handoff's extension") { try await !desk.trayItemsShown().isEmpty }
            try await desk.setExtension(DesktopSession.extensionUUID, enabled: false)
            try await eventually(10, "the item in GNOME Shell's panel, saying what waits") {
                try await desk.trayItemsShown() == ["Handoff: Continue \u{201C}Shopping list\u{201D} from ws-a"]
            }
            #expect(desk.gnomeShellErrors.isEmpty, "GNOME Shell logged: \(desk.gnomeShellErrors)")
            // The AppIndicator extension's watcher, back, took the item without a refusal
            // being reported (one of its first calls may be refused, and is made again).
            let agentLog = (try? String(contentsOfFile: desk.root + "/agent.log", encoding: .utf8)) ?? ""
            #expect(!agentLog.contains("host=failed"), "the agent reported the panel refusing the icon")
        }
    }

    /// Doctor in GNOME with neither handoff's extension nor the AppIndicator one: no tray,
    /// and it names the extension to enable; enabled, the presence shows and doctor is content.
    @Test func doctorInGnomeNamesTheExtensionUntilItIsEnabled() async throws {
        try await withGnomeShell(preset: [], enable: []) { net, desk in
            func tray() async throws -> [String: Any] {
                let doctor = try await net.ctl("b", "doctor", "--json")
                let checks = (try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any])?["checks"] as? [[String: Any]] ?? []
                return checks.first { $0["id"] as? String == "tray" } ?? [:]
            }
            try await eventually(10, "doctor to name the extension") {
                let t = try await tray()
                return t["status"] as? String == "warning" && (t["fix"] as? String ?? "").contains("gnome-extensions enable handoff@handoff.org")
            }
            try await desk.setExtension(DesktopSession.extensionUUID, enabled: true)
            try await eventually(15, "doctor to see the extension show the presence") {
                let t = try await tray()
                return t["status"] as? String != "warning" && (t["detail"] as? String ?? "").contains("shown in GNOME's panel by handoff's GNOME Shell extension")
            }
            try await desk.setExtension(DesktopSession.extensionUUID, enabled: false)
            try await eventually(15, "doctor to warn again once it is disabled") { try await tray()["status"] as? String == "warning" }
            // Each doctor above had the agent try the clipboard again (this shell has no
            // XWayland): its debug log says why there is none once, not once per try.
            let log = (try? String(contentsOfFile: desk.agentLog, encoding: .utf8)) ?? ""
            #expect(log.components(separatedBy: "no clipboard to share").count - 1 == 1, "said once per reason")
        }
    }

    /// A search typed in the overview reaches the agent's provider: a's offer marked
    /// searchable is found under its title, a click on the result continues it on b; an
    /// offer not marked searchable is not found.
    @Test func aSearchInTheOverviewFindsAndContinuesAnOffer() async throws {
        try await withGnomeShell { net, desk in
            let id = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Quarterly report", "--search"])
            var names: [String] = []
            try await eventually(15, "the shell's search to find the offer") {
                names = try await desk.shellProbe("search", "5", "quarter") as? [String] ?? []
                return names.contains("Quarterly report")
            }
            #expect(try await desk.shellProbe("search-activate", "Quarterly report") as? Bool == true)
            #expect(try await desk.waitForRecord("editor")["argv"] as? [String] == ["handoff:continued/\(id)"])

            _ = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Secret plan"])
            let secret = try await desk.shellProbe("search", "5", "secret") as? [String]
            #expect(secret == [], "not marked searchable: \(String(describing: secret))")
            #expect(desk.gnomeShellErrors.isEmpty, "GNOME Shell logged: \(desk.gnomeShellErrors)")
        }
    }

    /// The clipboard on GNOME Wayland (issue 42, part 2), as a user meets it: a copy in a
    /// Wayland GTK app on b, GNOME, is pasted by an X11 app on a, and a copy on a is pasted
    /// by a Wayland GTK app on b. Mutter has no data-control protocol; b's agent shares
    /// XWayland's clipboard, which GNOME keeps in step with Wayland apps' both ways. Not
    /// read on demand: Mutter's clipboard manager reads each new clipboard's text at once.
    @Test func aWaylandAppsCopyOnGnomeIsPastedOnAnotherWorkstationAndTheReverse() async throws {
        try await NetnsRun.withPairedDesktop { net, b in
            let a = try DesktopSession(net, host: "a")
            defer { a.stop() }
            try await a.startBus()
            try await a.startX()
            try await a.startAgent()
            try await b.startPanelBus()
            try await explained(b) {
                try await b.startGnomeShell(preset: [], x11: true)
                try await b.startAgent(["--no-notifications"], environment: ["XDG_CURRENT_DESKTOP": "GNOME"])
                try await eventually(10, "both agents to share the clipboard") { a.log.contains("sharing the clipboard") && b.log.contains("sharing the clipboard") }
                let sources = try await net.ctl("b", "sources").stdout
                #expect(sources.contains("sharing XWayland's X11 clipboard instead, which GNOME keeps in step with Wayland apps' both ways"), "\(sources)")
                func newest(_ host: String) async throws -> ClipboardRecord? { try await HandoffClient(socketPath: net.socket(host)).clipboard() }
                // Clicks the app's window (again, as a user would, until the app has the
                // keyboard's focus and says it did its part).
                func focus(_ title: String, until log: String, says: String) async throws {
                    try await eventually(15, "\(title) to be focused and say \(says)") {
                        if ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(says) { return true }
                        _ = try await b.shellProbe("focus", title)
                        return false
                    }
                }
                var wayland = b.environment
                wayland["GDK_BACKEND"] = "wayland"
                wayland["XDG_DATA_DIRS"] = "/usr/share"  // GTK's icons and MIME database

                // A copy in a Wayland app on GNOME.
                let copierLog = b.root + "/copier.log"
                b.adopt(try await net.spawn("b", log: copierLog, [Self.waylandApp, "copy", "copied in GNOME"], environment: wayland))
                try await focus("handoff-copier", until: copierLog, says: "copied")
                #expect((try await b.shellProbe("selection") as? [String] ?? []).contains("text/plain;charset=utf-8"))
                try await eventually(15, "the copy in GNOME to reach a") { try await newest("a")?.local == false }
                let fromGnome = try await newest("a")
                #expect(fromGnome?.formats.map(\.type).contains("text/plain;charset=utf-8") == true, "\(String(describing: fromGnome))")
                try await eventually(10, "a's X11 app to paste the copy made in GNOME") {
                    try await a.run(["timeout", "20", "xclip", "-selection", "clipboard", "-o"]).stdout == "copied in GNOME"
                }

                // The reverse: a copy on a, pasted by a Wayland app on GNOME.
                let ownerLog = a.root + "/owner.log"
                a.adopt(try await net.spawn("a", log: ownerLog, [X11ClipboardTests.owner, "UTF8_STRING=@copied on a"], environment: a.environment))
                try await eventually(15, "a's copy to reach b") { let n = try await newest("b"); return n?.local == false && n?.id != fromGnome?.id }
                func asked(_ log: String? = nil) -> [String] {
                    ((try? String(contentsOfFile: log ?? ownerLog, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasPrefix("request ") }.map { String($0.dropFirst(8)) }
                }
                try await eventually(10, "b's agent to offer a's copy to GNOME") {
                    (try await b.shellProbe("selection") as? [String] ?? []).contains("UTF8_STRING")
                }
                // Not lazy on GNOME: Mutter's clipboard manager keeps a copy of every new
                // clipboard's text (to 4 MiB) or image (to 200 MiB), read at once so that it
                // outlives its owner; so a's app is asked for its text before anything on b
                // pastes (Desktop.md, "GNOME on Wayland"). Once: the manager reads one format.
                try await eventually(10, "GNOME to read a's copy for its clipboard manager") { asked().filter { $0 == "UTF8_STRING" }.count == 1 }
                try await never(within: 0.5, because: "GNOME asked a's app for its text again") { asked().filter { $0 == "UTF8_STRING" }.count != 1 }
                let pasterLog = b.root + "/paster.log"
                b.adopt(try await net.spawn("b", log: pasterLog, [Self.waylandApp, "paste"], environment: wayland))
                try await focus("handoff-paster", until: pasterLog, says: "pasted ")
                #expect(((try? String(contentsOfFile: pasterLog, encoding: .utf8)) ?? "").contains("pasted copied on a\n"))

                // An image copied on a is not offered on GNOME at once (Mutter would read it
                // whole, across the network, unasked): it waits for Paste in the menu, which
                // offers it; only then is a's app asked for it.
                let imageLog = a.root + "/image-owner.log"
                a.adopt(try await net.spawn("a", log: imageLog, [X11ClipboardTests.owner, "image/png=@not really a png"], environment: a.environment))
                let before = try await newest("b")?.id
                try await eventually(15, "a's image copy to reach b") { let n = try await newest("b"); return n?.local == false && n?.id != before }
                try await eventually(10, "b's agent to hold it back") { b.log.contains("this desktop would read it whole") }
                let held = try await net.ctl("b", "sources").stdout
                #expect(held.contains("waits for Paste in the menu"), "\(held)")
                #expect(!(try await b.shellProbe("selection") as? [String] ?? []).contains("image/png"))
                #expect(!asked(imageLog).contains("image/png"), "\(asked(imageLog))")
                #expect(try await b.shellProbe("click", "Paste here what ws-a copied") as? Bool == true)
                try await eventually(10, "Paste in the menu to offer the image to GNOME") {
                    (try await b.shellProbe("selection") as? [String] ?? []).contains("image/png")
                }
                try await eventually(10, "GNOME to read it once offered") { asked(imageLog).contains("image/png") }
                #expect(b.gnomeShellErrors.isEmpty, "GNOME Shell logged: \(b.gnomeShellErrors)")
            }
        }
    }

    /// GNOME on Wayland without XWayland for the agent (no DISPLAY): nothing carries the
    /// clipboard, and doctor says how to give the agent GNOME's XWayland.
    @Test func doctorInGnomeWithoutXWaylandSaysHowToShareTheClipboard() async throws {
        try await NetnsRun.withPairedDesktop { net, b in
            try await b.startPanelBus()
            try await explained(b) {
                try await b.startGnomeShell(preset: [], enable: [])
                b.useDisplays(runtime: b.shellRuntime, wayland: "wayland-0", x: nil, xauthority: nil)
                try await b.startAgent(["--no-notifications"], environment: ["XDG_CURRENT_DESKTOP": "ubuntu:GNOME"])
                let doctor = try await net.ctl("b", "doctor", "--json")
                let checks = (try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any])?["checks"] as? [[String: Any]] ?? []
                let clipboard = checks.first { $0["id"] as? String == "clipboard" } ?? [:]
                #expect(clipboard["status"] as? String == "warning", "\(clipboard)")
                #expect((clipboard["detail"] as? String ?? "").contains("no data-control protocol"), "\(clipboard)")
                #expect((clipboard["fix"] as? String ?? "").contains("systemctl --user import-environment DISPLAY XAUTHORITY"), "\(clipboard)")
                #expect(doctor.status != 0 || doctor.stdout.contains("warning"), "\(doctor)")
            }
        }
    }

    static var waylandApp: String { TestEnvironment.packageRoot + "/Tests/Fixtures/wayland-app" }
}
}

/// The GNOME Shell extension's parts that need no shell: its menu model against what other
/// machines may send (Tests/Fixtures/gnome-shell/model-test.js, run by gjs, the shell's own
/// JavaScript engine), and link-entry, which picks the entry point a shell's version loads.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gjs") || ProcessInfo.processInfo.environment["CI"] == "true",
                "needs gjs (scripts/install-deps)"))
struct GnomeShellExtensionTests {
    static let source = TestEnvironment.packageRoot + "/packaging/gnome-shell"

    @Test func theMenuModelHoldsAgainstHostileAndOddInput() async throws {
        let r = try await CommandLineTool.run("/usr/bin/gjs", ["-m", TestEnvironment.packageRoot + "/Tests/Fixtures/gnome-shell/model-test.js"],
                                              environment: [:])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("checks passed") && !r.stdout.contains("not ok"), "\(r)")
    }

    /// GNOME Shell 43 and 44 load a script, 45 and later an ES module: extension.js links to
    /// the one this shell loads, whatever way its version is written.
    @Test(arguments: [("43.9", "extension-43.js"), ("43.9-0+deb12u2", "extension-43.js"), ("1:44.2-1", "extension-43.js"),
                      ("45.0", "extension-45.js"), ("48.7-0+deb13u1", "extension-45.js"), ("", "extension-45.js")])
    func theEntryIsTheOneTheShellLoads(version: String, entry: String) async throws {
        let dir = try TestEnvironment.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try await CommandLineTool.run(Self.source + "/link-entry", [dir, version], environment: ["PATH": "/usr/bin:/bin"])
        #expect(r.status == 0, "\(r)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir + "/extension.js") == entry)
    }
}
