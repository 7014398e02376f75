import Foundation
import HandoffTestSupport
import Testing

/// The presence as users meet it: the tray icon and its menu in real panels (xfce4-panel
/// under Xvfb, waybar under headless sway), read and clicked the way those panels do;
/// search from the shell, called as GNOME Shell and KRunner call it; the presence's own
/// D-Bus interface. Two namespace workstations, a's offers shown on b. Root only.
extension WorkstationTests {
@Suite struct PresenceTests {
    /// a and b paired; b has a desktop session with a session bus that can start the
    /// desktop's services, the usual entries, and the agent (started before any panel).
    func withDesktop(wayland: Bool = false, daemonOptions: [String] = [], _ body: (NetnsRun, DesktopSession) async throws -> Void) async throws {
        try await NetnsRun.withPairedDesktop(daemonOptions: daemonOptions) { net, desk in
            try desk.addEntry("org.example.Editor.desktop", name: "Editor", lines: [
                "Icon=accessories-text-editor", "X-Handoff-ActivityTypes=org.example.editor.edit-note;",
            ], recordAs: "editor")
            try desk.addEntry("test-browser.desktop", name: "Test Browser", lines: ["MimeType=x-scheme-handler/http;x-scheme-handler/https;"],
                              recordAs: "browser")
            try desk.setDefaultBrowser("test-browser.desktop")
            try await desk.startPanelBus()
            if wayland { try await desk.startSway() } else { try await desk.startX() }
            try await desk.startAgent(["--no-notifications"])
            do {
                try await body(net, desk)
            } catch {
                let logs = ["agent.log", "xfce4-panel.log", "waybar.log"].map { name in
                    "--- \(name) ---\n" + (((try? String(contentsOfFile: desk.root + "/" + name, encoding: .utf8)) ?? "").split(separator: "\n").suffix(25).joined(separator: "\n"))
                }
                throw TestFailure("\(error)\n" + logs.joined(separator: "\n"))
            }
        }
    }

    func removeRecord(_ desk: DesktopSession, _ name: String) {
        try? FileManager.default.removeItem(atPath: desk.records + "/" + name + ".json")
    }

    @Test func theTrayInXfcePanelContinuesWhatIsOfferedAndComesBackWithThePanel() async throws {
        try await withDesktop { net, desk in
            // No panel yet: the tray waits, and doctor says what this desktop needs.
            let sources = try await net.ctl("b", "sources")
            #expect(sources.stdout.contains("tray") && sources.stdout.contains("no panel here shows tray icons"), "\(sources)")
            let doctor = try await net.ctl("b", "doctor", "--json")
            let checks = (try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any])?["checks"] as? [[String: Any]] ?? []
            let tray = checks.first { $0["id"] as? String == "tray" }
            #expect(tray?["status"] as? String == "warning" && (tray?["fix"] as? String ?? "").contains("gnome-shell-extension-appindicator"), "\(doctor)")

            let id = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Shopping list"])
            // The panel starts after the agent: the agent registers with it when it appears.
            let panel = try await desk.startXfcePanel()
            try await eventually(10, "the item to register with xfce4-panel") { try await desk.trayRegistered() }
            let item = try await desk.probe("item") as? [String: Any]
            let props = item?["properties"] as? [String: Any] ?? [:]
            #expect(props["IconName"] as? String == "handoff-available", "\(props)")
            #expect(props["Menu"] as? String == "/MenuBar")
            let tooltip = props["ToolTip"] as? [Any] ?? []
            #expect((tooltip.last as? String ?? "").contains("Continue \u{201C}Shopping list\u{201D} from ws-a"), "\(tooltip)")
            let shown = try await net.ctl("b", "sources")
            #expect(shown.stdout.contains("shown in the panel by xfce4-panel"), "\(shown)")

            // The menu as the panel reads it, and a click as the panel sends it: the app opens.
            let entry = "Continue \u{201C}Shopping list\u{201D} from ws-a"
            try await eventually(10, "the offer in the menu") { try await desk.menuLabels().contains(entry) }
            #expect(try await desk.record("editor") == nil, "nothing opens before the user clicks")
            _ = try await desk.probe("click", entry)
            #expect(try await desk.waitForRecord("editor")["argv"] as? [String] == ["handoff:continued/\(id)"])

            // The panel restarts: the item registers with the new watcher.
            net.stop(panel, SIGTERM)
            try await eventually(10, "the old panel to go") { try await !desk.trayRegistered() }
            try await desk.startXfcePanel()
            try await eventually(10, "the item to register with the new panel") { try await desk.trayRegistered() }

            // A real left click on the icon (at the panel's start, under Xvfb) continues the newest.
            removeRecord(desk, "editor")
            try await eventually(10, "a left click to continue the newest") {
                _ = try await desk.run(["xdotool", "mousemove", "13", "13", "click", "1"])
                return try desk.record("editor") != nil
            }
            #expect(try desk.record("editor")?["argv"] as? [String] == ["handoff:continued/\(id)"])
        }
    }

    /// What a copies is on b's clipboard; b then copies a password (kept from the others, so
    /// a's copy stays the account's newest): the menu's "Paste here" makes a's copy b's
    /// clipboard again. When the agent stops, its icon leaves the panel.
    @Test func pasteHereFromTheTrayAndTheIconGoesWithTheAgent() async throws {
        try await withDesktop { net, desk in
            try await desk.startXfcePanel()
            try await eventually(10, "the item to register") { try await desk.trayRegistered() }
            let copied = try await net.ctl("a", ["copy"], stdin: "copied on a")
            #expect(copied.status == 0, "\(copied)")
            let entry = "Paste here what ws-a copied (text, 11 B)"
            try await eventually(10, "the paste entry in b's menu") { try await desk.menuLabels().contains(entry) }
            func pasted() async throws -> String { try await desk.run(["timeout", "20", "xclip", "-selection", "clipboard", "-o"]).stdout }
            try await eventually(10, "b's clipboard to hold a's copy") { try await pasted() == "copied on a" }

            let owner = TestEnvironment.packageRoot + "/Tests/Fixtures/clipboard-owner"
            let secret = try await net.spawn("b", log: desk.root + "/owner.log", [owner, "UTF8_STRING=@hunter2", "x-kde-passwordManagerHint=@secret"],
                                             environment: desk.environment)
            desk.adopt(secret)
            try await eventually(10, "b's clipboard to hold the password") { try await pasted() == "hunter2" }
            #expect(try await desk.menuLabels().contains(entry), "a's copy is still the newest: the password was not shared")
            _ = try await desk.probe("click", entry)
            try await eventually(10, "b's clipboard to hold a's copy again") { try await pasted() == "copied on a" }

            let agent = try #require(desk.agent)
            await desk.stopAgent()
            try await eventually(10, "the icon to leave the panel") { try await !desk.trayRegistered(agent: agent) }
        }
    }

    @Test func theTrayInWaybarUnderSway() async throws {
        try await withDesktop(wayland: true) { net, desk in
            let bar = try await desk.startWaybar()
            try await eventually(10, "the item to register with waybar") { try await desk.trayRegistered() }
            #expect(try await desk.menuLabels().contains("Nothing to continue"))
            let id = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "From the desk"])
            let entry = "Continue \u{201C}From the desk\u{201D} from ws-a"
            try await eventually(10, "the offer in waybar's menu") { try await desk.menuLabels().contains(entry) }
            _ = try await desk.probe("click", entry)
            #expect(try await desk.waitForRecord("editor")["argv"] as? [String] == ["handoff:continued/\(id)"])
            // waybar killed and started again: registered again.
            net.stop(bar, SIGKILL)
            try await eventually(10, "the killed waybar's watcher to go") { try await !desk.trayRegistered() }
            try await desk.startWaybar()
            try await eventually(10, "the item to register with the new waybar") { try await desk.trayRegistered() }
            #expect(try await net.ctl("b", "sources").stdout.contains("shown in the panel by waybar"))
            // The Handoff launcher (its desktop entry runs `handoff-session --activate`): the newest continues.
            removeRecord(desk, "editor")
            let launched = try await desk.run([try TestEnvironment.binary("handoff-session"), "--activate"])
            #expect(launched.status == 0, "\(launched)")
            #expect(try await desk.waitForRecord("editor")["argv"] as? [String] == ["handoff:continued/\(id)"])
        }
    }

    /// KDE Plasma 5.27's own panel (plasmashell, its System Tray, kded5's watcher): the
    /// item registers, and plasmashell itself reads it (GetAll on the item, seen on the
    /// bus), so the tray shows it; sources names Plasma's tray, not kded5.
    @Test func theTrayInPlasmasPanel() async throws {
        try await withDesktop { net, desk in
            let monitor = desk.root + "/monitor.log"
            desk.adopt(try await net.spawn("b", log: monitor, ["dbus-monitor", "--session", "type='method_call',path='/StatusNotifierItem'"],
                                           environment: desk.environment))
            let shell = try await desk.startPlasmaShell()
            try await eventually(15, "the item to register with Plasma's watcher") { try await desk.trayRegistered() }
            let owner = try await desk.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                            "org.freedesktop.DBus.GetNameOwner", "string:org.kde.plasmashell"]).stdout
            let unique = try #require(owner.split(separator: "\"").dropFirst().first.map(String.init), "plasmashell's bus name: \(owner)")
            try await eventually(30, "plasmashell to read the item") {
                ((try? String(contentsOfFile: monitor, encoding: .utf8)) ?? "").split(separator: "\n").contains {
                    $0.contains("sender=\(unique)") && $0.contains("member=GetAll")
                }
            }
            try await eventually(10, "sources to name Plasma's tray") {
                try await net.ctl("b", "sources").stdout.contains("shown in the panel by KDE Plasma's system tray")
            }
            #expect(Glibc.kill(shell, 0) == 0, "plasmashell still runs")
        }
    }

    /// Many offers keep the menu small; a workstation that goes away leaves the menu at
    /// once; what a member gone bad writes (Tests/Fixtures/hostile-keeper with a's key: a
    /// 10 KB title with markup and a newline) shows as one short line of text; the
    /// presence's own interface says the same as the menu.
    @Test func theMenuFollowsTheWorkstationsAndShowsHostileTitlesAsText() async throws {
        try await withDesktop { net, desk in
            try await desk.startXfcePanel()
            try await eventually(10, "the item to register") { try await desk.trayRegistered() }

            // 500 offers in a row from a: b's menu shows the newest, one entry for a.
            let socket = net.socket("a")
            let script = (1...500).map {
                "curl -sf --unix-socket \(socket) -X POST http://localhost/v1/activities -d '{\"activityType\": \"org.example.editor.edit-note\", \"title\": \"Note \($0)\"}' >/dev/null"
            }.joined(separator: " && ")
            let many = try await net.exec("a", ["sh", "-c", script])
            #expect(many.status == 0, "\(many)")
            try await eventually(20, "the newest of 500 in the menu") { try await desk.menuLabels().contains("Continue \u{201C}Note 500\u{201D} from ws-a") }
            let labels = try await desk.menuLabels()
            #expect(labels.filter { $0.hasPrefix("Continue") }.count == 1, "\(labels)")
            let presence = try await desk.probe("presence") as? [String: Any]
            let offers = presence?["Offers"] as? [[String: Any]] ?? []
            #expect(offers.count == 1 && offers.first?["title"] as? String == "Note 500" && offers.first?["device"] as? String == "ws-a", "\(offers)")
            #expect(offers.first?["kept"] as? Bool == false && offers.first?["app"] as? String == "org.example.Editor.desktop", "\(offers)")

            // a goes away: its offer leaves b's menu, without waiting for a timeout.
            await net.kill("a", SIGKILL)
            try await eventually(5, "a's offer to leave the menu") { try await desk.menuLabels().contains("Nothing to continue") }
            #expect(((try await desk.probe("presence") as? [String: Any])?["Offers"] as? [Any])?.isEmpty == true)

            // a's key in a hostile program: a title no handoffd would make.
            let title = "<b>bold</b> &amp; a_b\nsecond line " + String(repeating: "x", count: 10_000)
            let keeper = try await net.spawn("a", log: net.directory + "/keeper.log", [
                "/usr/bin/python3", TestEnvironment.packageRoot + "/Tests/Fixtures/hostile-keeper", try await net.address("b"), String(try net.peerPort("b")),
                "--cert", net.stateDirectory("a") + "/device-cert.pem", "--key", net.stateDirectory("a") + "/device-key.pem",
                "--case", "offer-streams", "--listen-port", "1", "--hold", "30", "--title", title,
            ])
            var label = ""
            try await eventually(15, "the hostile title in the menu") {
                label = try await desk.menuLabels().first { $0.hasPrefix("Continue") } ?? ""
                return label.contains("bold")
            }
            #expect(label.hasPrefix("Continue \u{201C}<b>bold</b> &amp; a__b second line xxx"), "markup stays text, one line, _ doubled: \(label)")
            #expect(label.count < 100 && label.contains("…"), "shortened: \(label.count)")
            let item = try await desk.probe("item") as? [String: Any]
            let body = ((item?["properties"] as? [String: Any])?["ToolTip"] as? [Any])?.last as? String ?? ""
            #expect(body.contains("&lt;b&gt;bold&lt;/b&gt; &amp;amp;") && !body.contains("<b>") && body.count < 200, "the tooltip's markup is escaped: \(body)")
            net.stop(keeper, SIGKILL)
            try await eventually(5, "the hostile offer to leave the menu") { try await desk.menuLabels().contains("Nothing to continue") }
            #expect(desk.isAgentRunning)
        }
    }

    /// Search as GNOME Shell and KRunner call it: live offers and the history, only what
    /// was marked searchable, nothing for a term that matches nothing, activation continues
    /// (or reopens a past page); hostile queries are answered, harmlessly.
    @Test func searchFromTheShellFindsOffersAndHistory() async throws {
        try await withDesktop { net, desk in
            let reportID = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Quarterly report",
                                                                    "--search", "--keywords", "finance", "--webpage-url", "https://example.com/q3"])
            _ = reportID
            try await eventually(10, "the report to be found") {
                ((try await desk.probe("gnome", "quart") as? [String: Any])?["ids"] as? [String])?.count == 1
            }
            // A newer offer replaces it: the report is now a past activity, in the history.
            let photosID = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Holiday photos", "--search"])
            _ = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Secret plan"])
            _ = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Holiday photos again", "--search"])

            let report = try await desk.probe("gnome", "FIN", "quar") as? [String: Any]
            let ids = report?["ids"] as? [String] ?? []
            #expect(ids.count == 1 && ids[0].hasPrefix("history/"), "the past report, from the history: \(ids)")
            let metas = report?["metas"] as? [[String: Any]] ?? []
            #expect(metas.first?["name"] as? String == "Quarterly report")
            #expect((metas.first?["description"] as? String ?? "").contains("Seen on ws-a"), "\(metas)")
            #expect((try await desk.probe("gnome", "secret") as? [String: Any])?["ids"] as? [String] == [], "not marked searchable")
            #expect((try await desk.probe("gnome", "zebra") as? [String: Any])?["ids"] as? [String] == [])

            // The live offer, through KRunner, and Run continues it here.
            let matches = try await desk.probe("krunner", "holiday again") as? [[Any]] ?? []
            #expect(matches.count >= 1 && (matches.first?[0] as? String ?? "").hasPrefix("offer/"), "\(matches)")
            #expect(matches.first?[1] as? String == "Holiday photos again")
            _ = try await desk.probe("krunner-run", matches.first?[0] as? String ?? "")
            let opened = try await desk.waitForRecord("editor")
            #expect((opened["argv"] as? [String])?.first?.hasPrefix("handoff:continued/") == true)
            #expect(opened["argv"] as? [String] != ["handoff:continued/\(photosID)"], "the newest, not the older photos")

            // A past page, activated from GNOME Shell's results: it opens again in the browser.
            _ = try await desk.probe("gnome-activate", ids[0], "quar")
            #expect(try await desk.waitForRecord("browser")["argv"] as? [String] == ["https://example.com/q3"])

            // Hostile queries: 1,000 terms, 1 MB of text; answered, the agent still there.
            let thousand = try await desk.probe(["gnome"] + (0..<1000).map { "t\($0)" }) as? [String: Any]
            #expect(thousand?["ids"] as? [String] == [])
            let megabyte = desk.root + "/megabyte-query"
            try String(repeating: "quarterly ", count: 100_000).write(toFile: megabyte, atomically: true, encoding: .utf8)
            let big = try await desk.probe("krunner", "@" + megabyte) as? [Any]
            #expect(big != nil)
            let bigTerms = desk.root + "/many-terms"
            try (0..<100_000).map { "w\($0)" }.joined(separator: "\n").write(toFile: bigTerms, atomically: true, encoding: .utf8)
            #expect((try await desk.probe("gnome", "@@" + bigTerms) as? [String: Any])?["ids"] as? [String] == [])
            #expect(desk.isAgentRunning)
        }
    }

    /// Removed by mistake, b pairs again from its menu: the entry appears once b knows, and
    /// clicking it gives b a new identity and opens pairing; the code is confirmed as
    /// usual, and the menu offers plain pairing again.
    @Test func aRemovedWorkstationPairsAgainFromTheMenu() async throws {
        try await withDesktop { net, desk in
            try await desk.startXfcePanel()
            try await eventually(10, "the item to register") { try await desk.trayRegistered() }
            #expect(try await desk.menuLabels().contains("Pair a workstation…"))
            // Pairing from the menu opens the window; the menu says so and can stop it.
            _ = try await desk.probe("click", "Pair a workstation…")
            try await eventually(10, "the menu to offer stopping") { try await desk.menuLabels().contains("Stop pairing") }
            #expect(try await net.pairingStatus("b")["state"] as? String == "waiting")
            _ = try await desk.probe("click", "Stop pairing")
            try await eventually(10, "the menu to offer pairing again") {
                let labels = try await desk.menuLabels()
                return labels.contains("Pair a workstation…") && !labels.contains("Stop pairing")
            }
            #expect(try await net.pairingStatus("b")["expiresAt"] is NSNull, "the window is closed")
            // A source switched from the menu, as `handoffctl sources off` does; and doctor's
            // warnings have their lines (this test host guards no sleep: no logind).
            _ = try await desk.probe("click", "Media players")
            try await eventually(10, "media to be off") { try await net.ctl("b", "sources").stdout.contains("media             off") }
            #expect(try await desk.menuLabels().contains { $0.hasPrefix("Sleep: ") }, "doctor's warning in the menu")
            let idB = try await net.deviceID("b")
            #expect(try await net.ctl("a", "remove", idB).status == 0)
            let again = "Pair again as a new workstation…"
            try await eventually(15, "b's menu to offer pairing as a new workstation") { try await desk.menuLabels().contains(again) }

            let log = net.directory + "/pair-a.log"
            let pairA = try await net.spawn("a", log: log, [try TestEnvironment.binary("handoffctl"), "pair"])
            _ = try await desk.probe("click", again)
            var code: String?
            try await eventually(30, "a to show a code") {
                code = NetnsRun.pairingCode(in: (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
                return code != nil
            }
            let newB = try await net.deviceID("b")
            #expect(newB != idB, "b has a new identity")
            // Each waits for the other to confirm: both at once, as two people would.
            let shown = code!
            async let confirmB = net.ctl("b", "pair", "--code", shown)
            async let confirmA = net.ctl("a", "pair", "--code", shown)
            let (rb, ra) = try await (confirmB, confirmA)
            #expect(rb.status == 0 && ra.status == 0, "\(rb)\n\(ra)")
            _ = try await net.wait(pairA, timeout: 15)
            try await eventually(20, "a to link with b's new identity") { try await net.isConnected("a", to: newB) }
            try await eventually(15, "b's menu to offer plain pairing again") {
                let labels = try await desk.menuLabels()
                return labels.contains("Pair a workstation…") && !labels.contains(again)
            }
        }
    }

    @Test func searchFindsNothingWhenTheHistoryIsOff() async throws {
        try await withDesktop(daemonOptions: ["--history-days", "0"]) { net, desk in
            _ = try await net.offer(from: "a", to: "b", ["--type", "org.example.editor.edit-note", "--title", "Quarterly report", "--search"])
            #expect((try await desk.probe("gnome", "quarterly") as? [String: Any])?["ids"] as? [String] == [])
            #expect((try await desk.probe("krunner", "quarterly") as? [Any])?.isEmpty == true)
        }
    }
}
}
