import Foundation
import HandoffTestSupport

/// Real panels that show tray icons (StatusNotifierItem hosts), in a test's desktop
/// session, and `Tests/Fixtures/panel-probe`, which reads the agent on the bus the way a
/// panel and a shell do. Facts on running them headless: Docs/Desktop.md, "The tray".
extension DesktopSession {
    static var probe: String { TestEnvironment.packageRoot + "/Tests/Fixtures/panel-probe" }

    /// The session bus, with D-Bus activation of the desktop's own services (xfce4-panel
    /// needs xfconfd) in this session's folders, not root's: what the bus starts inherits
    /// its environment.
    func startPanelBus() async throws {
        var env = environment
        env["XDG_DATA_DIRS"] = "/usr/local/share:/usr/share"
        env["NO_AT_BRIDGE"] = "1"
        let pid = try await net.spawn(host, log: root + "/bus.log", ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=" + busAddress],
                                      environment: env)
        adopt(pid)
        try await eventually(10, "the session bus on \(host)") { FileManager.default.fileExists(atPath: self.busPath) }
    }

    /// xfce4-panel with a panel of one plugin, the systray (which owns the watcher), under
    /// this session's Xvfb. Returns its pid once it owns `org.kde.StatusNotifierWatcher`.
    @discardableResult
    func startXfcePanel() async throws -> Int32 {
        try await startX()
        let dir = configHome + "/xfce4/xfconf/xfce-perchannel-xml"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Self.xfcePanel.write(toFile: dir + "/xfce4-panel.xml", atomically: true, encoding: .utf8)
        var env = environment
        env["NO_AT_BRIDGE"] = "1"
        // Without a window manager it waits 5 s for one unless told not to.
        let pid = try await net.spawn(host, log: root + "/xfce4-panel.log", ["xfce4-panel", "--disable-wm-check"], environment: env)
        adopt(pid)
        try await waitForWatcher("xfce4-panel")
        return pid
    }

    /// waybar with only its tray module, on this session's headless sway. Runs as root
    /// (the bus's user) with the compositor's socket by its path.
    @discardableResult
    func startWaybar() async throws -> Int32 {
        try await startSway()
        let config = root + "/waybar.json", style = root + "/waybar.css"
        try #"{"layer": "top", "position": "top", "height": 26, "modules-left": [], "modules-center": [], "modules-right": ["tray"], "tray": {"icon-size": 16, "spacing": 4}}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        try "* { font-family: sans-serif; font-size: 12px; min-height: 0; }\n".write(toFile: style, atomically: true, encoding: .utf8)
        var env = environment
        env["WAYLAND_DISPLAY"] = waylandRuntime! + "/wayland-1"
        env["NO_AT_BRIDGE"] = "1"
        env["GDK_BACKEND"] = "wayland"
        let pid = try await net.spawn(host, log: root + "/waybar.log", ["waybar", "-c", config, "-s", style], environment: env)
        adopt(pid)
        try await waitForWatcher("waybar")
        return pid
    }

    /// KDE Plasma's own shell (Debian 12's 5.27) under this session's Xvfb: kded5, whose
    /// statusnotifierwatcher module owns the watcher, the activity manager plasmashell
    /// refuses to start without, and plasmashell with its default desktop layout (a panel
    /// with the System Tray). Returns plasmashell's pid once it owns `org.kde.plasmashell`
    /// and a tray host has registered.
    @discardableResult
    func startPlasmaShell() async throws -> Int32 {
        try await startX()
        var env = environment
        env["XDG_DATA_DIRS"] = root + "/system:/usr/share"
        env["XDG_CURRENT_DESKTOP"] = "KDE"
        env["KDE_FULL_SESSION"] = "true"
        env["KDE_SESSION_VERSION"] = "5"
        env["QT_QPA_PLATFORM"] = "xcb"
        env["QT_QUICK_BACKEND"] = "software"  // no GPU here
        env["NO_AT_BRIDGE"] = "1"
        adopt(try await net.spawn(host, log: root + "/kded5.log", ["kded5"], environment: env))
        try await waitForWatcher("kded5")
        // In the multiarch folder of this machine's architecture.
        let activities = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? [])
            .map { "/usr/lib/\($0)/libexec/kactivitymanagerd" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let activities else { throw TestFailure("no kactivitymanagerd in /usr/lib/*/libexec (scripts/install-deps installs it)") }
        adopt(try await net.spawn(host, log: root + "/kactivitymanagerd.log", [activities], environment: env))
        let pid = try await net.spawn(host, log: root + "/plasmashell.log", ["plasmashell", "--no-respawn"], environment: env)
        adopt(pid)
        try await eventually(60, "plasmashell on \(host) to start its shell and tray") {
            let names = try await self.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                            "org.freedesktop.DBus.ListNames"]).stdout
            let host = try await self.run(["dbus-send", "--session", "--print-reply", "--dest=org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher",
                                           "org.freedesktop.DBus.Properties.Get", "string:org.kde.StatusNotifierWatcher",
                                           "string:IsStatusNotifierHostRegistered"]).stdout
            return names.contains("\"org.kde.plasmashell\"") && host.contains("boolean true")
        }
        return pid
    }

    func waitForWatcher(_ who: String) async throws {
        try await eventually(20, "\(who) on \(host) to own org.kde.StatusNotifierWatcher") {
            try await self.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                "org.freedesktop.DBus.NameHasOwner", "string:org.kde.StatusNotifierWatcher"]).stdout.contains("boolean true")
        }
    }

    /// `panel-probe ARGS` in this session; its JSON answer.
    func probe(_ args: String...) async throws -> Any {
        try await probe(args)
    }

    func probe(_ args: [String]) async throws -> Any {
        try await jsonAnswer(Self.probe, args)
    }

    /// A probe's answer: the JSON of the last line it printed.
    func jsonAnswer(_ tool: String, _ args: [String]) async throws -> Any {
        let r = try await run([tool] + args)
        guard r.status == 0, let line = r.stdout.split(separator: "\n").last,
              let value = try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]) else {
            throw TestFailure("\((tool as NSString).lastPathComponent) \(args.joined(separator: " ")): \(r)")
        }
        return value
    }

    /// The labels of the tray's menu, depth first, as a panel would show them.
    func menuLabels() async throws -> [String] {
        let menu = try await probe("menu") as? [String: Any]
        var out: [String] = []
        func walk(_ e: [String: Any]) {
            for c in e["children"] as? [[String: Any]] ?? [] {
                if let l = c["label"] as? String { out.append(l) }
                walk(c)
            }
        }
        walk(menu?["root"] as? [String: Any] ?? [:])
        return out
    }

    /// Whether the watcher lists the agent's item (registered under its own bus name):
    /// xfce4-panel and waybar list it with its path, GNOME's AppIndicator extension without.
    func trayRegistered(agent pid: Int32? = nil) async throws -> Bool {
        guard let agent = pid ?? agent else { return false }
        let items = try await probe("items") as? [String] ?? []
        let name = "org.kde.StatusNotifierItem-\(agent)-1"
        return items.contains(name + "/StatusNotifierItem") || items.contains(name)
    }

    static let xfcePanel = """
        <?xml version="1.0" encoding="UTF-8"?>
        <channel name="xfce4-panel" version="1.0">
          <property name="configver" type="int" value="2"/>
          <property name="panels" type="array">
            <value type="int" value="1"/>
            <property name="panel-1" type="empty">
              <property name="position" type="string" value="p=6;x=0;y=0"/>
              <property name="length" type="uint" value="100"/>
              <property name="position-locked" type="bool" value="true"/>
              <property name="icon-size" type="uint" value="16"/>
              <property name="size" type="uint" value="26"/>
              <property name="plugin-ids" type="array"><value type="int" value="1"/></property>
            </property>
          </property>
          <property name="plugins" type="empty">
            <property name="plugin-1" type="string" value="systray"><property name="square-icons" type="bool" value="true"/></property>
          </property>
        </channel>
        """
}
