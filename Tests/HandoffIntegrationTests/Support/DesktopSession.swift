import Foundation
import HandoffTestSupport

/// A graphical session on a namespace host, as far as handoff needs one: a session
/// D-Bus (dbus-daemon --session), XDG folders of its own with desktop entries whose Exec
/// is Tests/Fixtures/record-launch, and the session agent (handoff-session). Optionally
/// a real notification server (dunst under Xvfb).
final class DesktopSession: @unchecked Sendable {
    let net: NetnsRun
    let host: String
    let root: String
    private(set) var pids: [Int32] = []
    private(set) var agent: Int32?

    var dataHome: String { root + "/data" }
    var configHome: String { root + "/config" }
    var applications: String { dataHome + "/applications" }
    var records: String { root + "/records" }
    var busPath: String { root + "/bus" }
    var busAddress: String { "unix:path=" + busPath }
    var agentLog: String { root + "/agent.log" }
    static var recorder: String { TestEnvironment.packageRoot + "/Tests/Fixtures/record-launch" }

    init(_ net: NetnsRun, host: String) throws {
        self.net = net
        self.host = host
        root = net.directory + "/" + host + "-desktop"
        for d in [applications, configHome + "/handoff", records, root + "/system"] {
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        }
    }

    var environment: [String: String] {
        var env = [
            "DBUS_SESSION_BUS_ADDRESS": busAddress, "XDG_DATA_HOME": dataHome, "XDG_DATA_DIRS": root + "/system",
            "XDG_CONFIG_HOME": configHome, "XDG_CONFIG_DIRS": root + "/system", "HANDOFF_RECORD_DIR": records,
            "HOME": root,
        ]
        // Only this session's own X server: X sockets live in /tmp, which every test shares,
        // and an agent on another test's display would take part in its clipboard.
        if let display { env["DISPLAY"] = ":\(display)" }
        if let xauthority { env["XAUTHORITY"] = xauthority }
        if let waylandRuntime {
            env["WAYLAND_DISPLAY"] = waylandDisplay
            env["XDG_RUNTIME_DIR"] = waylandRuntime
        }
        return env
    }

    /// The X authority file of this session's X server, if it has one (XWayland's).
    private(set) var xauthority: String?
    /// The name of the compositor's socket in `waylandRuntime`.
    private(set) var waylandDisplay = "wayland-1"

    /// Takes the displays a compositor of this session made (GNOME Shell's Wayland socket
    /// and its XWayland), so that what starts afterwards (the agent, apps) uses them.
    func useDisplays(runtime: String, wayland: String, x: Int?, xauthority: String?) {
        waylandRuntime = runtime
        waylandDisplay = wayland
        display = x
        self.xauthority = xauthority
    }

    /// The display of this session's Xvfb, once `startX` started it.
    private(set) var display: Int?

    /// A desktop entry in the user's applications folder; `exec` defaults to the recorder.
    @discardableResult
    func addEntry(_ id: String, name: String, lines: [String], recordAs: String? = nil, exec: String? = nil) throws -> String {
        let path = applications + "/" + id
        var text = "[Desktop Entry]\nType=Application\nName=\(name)\n"
        text += "Exec=\(exec ?? "\(Self.recorder) --as \(recordAs ?? name.lowercased()) %u")\n"
        for l in lines { text += l + "\n" }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func setDefaultBrowser(_ id: String) throws {
        try "[Default Applications]\nx-scheme-handler/http=\(id)\nx-scheme-handler/https=\(id)\n"
            .write(toFile: configHome + "/mimeapps.list", atomically: true, encoding: .utf8)
    }

    func startBus() async throws {
        let pid = try await net.spawn(host, log: root + "/bus.log", ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=" + busAddress])
        pids.append(pid)
        try await eventually(10, "the session bus on \(host)") { FileManager.default.fileExists(atPath: self.busPath) }
    }

    /// An X server of this session's own (Xvfb), on a display it picks free (`-displayfd`).
    func startX() async throws {
        guard display == nil else { return }
        let log = root + "/xvfb.log"
        let x = try await net.spawn(host, log: log, ["Xvfb", "-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "640x480x24"])
        pids.append(x)
        var found: Int?
        // It writes the display it took once it accepts connections (its socket is in the
        // host's own /tmp/.X11-unix, scripts/netns).
        try await eventually(10, "Xvfb on \(host) to say its display") {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            found = text.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.first
            return found != nil
        }
        display = found
    }

    /// The Wayland runtime directory of this session's compositor, once `startSway` started it.
    private(set) var waylandRuntime: String?

    /// sway, headless, as the Wayland compositor of this session (a wlroots compositor with
    /// the data-control protocol). It refuses to run as root, so it runs as a system user
    /// of its own, made here if missing; its runtime directory is that user's. Clients here
    /// (the agent, wl-copy, wl-paste) run as root, which may use its socket.
    func startSway() async throws {
        guard waylandRuntime == nil else { return }
        let user = "handoff-wayland"
        func run(_ tool: String, _ args: [String]) async throws -> Int32 { try await CommandLineTool.run(tool, args, environment: [:]).status }
        if try await run("/usr/bin/id", ["-u", user]) != 0 {
            // Two tests may make it at once: the one that loses finds it made.
            _ = try await run("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user])
            guard try await run("/usr/bin/id", ["-u", user]) == 0 else { throw TestFailure("could not make the user \(user) for sway") }
        }
        let runtime = try TestEnvironment.makeTemporaryDirectory()
        _ = try await run("/bin/chown", ["\(user):\(user)", runtime])
        let config = runtime + "/sway.conf"
        try "output HEADLESS-1 resolution 640x480\n".write(toFile: config, atomically: true, encoding: .utf8)
        _ = try await run("/bin/chown", ["\(user):\(user)", config])
        waylandRuntime = runtime
        let pid = try await net.spawn(host, log: root + "/sway.log", [
            "setpriv", "--reuid", user, "--regid", user, "--init-groups", "env", "-i", "XDG_RUNTIME_DIR=" + runtime, "PATH=/usr/bin:/bin",
            "WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman", "WLR_HEADLESS_OUTPUTS=1", "sway", "-c", config,
        ])
        pids.append(pid)
        try await eventually(15, "sway on \(host) to make its Wayland socket") { FileManager.default.fileExists(atPath: runtime + "/wayland-1") }
    }

    /// KWin, KDE Plasma's compositor (Debian 12's 5.27), headless (`--virtual`) on this
    /// session's bus, as the Wayland compositor of this session: its own data-control
    /// protocol, as Plasma's clipboard applet uses. Debian gives kwin_wayland a file
    /// capability (cap_sys_resource), which a container without it in its bounding set
    /// refuses to execute (EPERM): a copy without it runs, as root, unprivileged enough.
    func startKWin() async throws {
        guard waylandRuntime == nil else { return }
        let runtime = try TestEnvironment.makeTemporaryDirectory()
        let kwin = runtime + "/kwin_wayland"
        try FileManager.default.copyItem(atPath: "/usr/bin/kwin_wayland", toPath: kwin)
        waylandRuntime = runtime
        var env = environment
        env["XDG_DATA_DIRS"] = root + "/system:/usr/share"
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        env.removeValue(forKey: "DISPLAY")
        pids.append(try await net.spawn(host, log: root + "/kwin.log", [kwin, "--virtual", "--no-lockscreen", "--socket", waylandDisplay,
                                                                      "--width", "1024", "--height", "768"], environment: env))
        try await eventually(15, "KWin on \(host) to make its Wayland socket") { FileManager.default.fileExists(atPath: runtime + "/" + self.waylandDisplay) }
    }

    /// Xvfb and dunst on the session bus: a real notification server.
    func startNotificationServer() async throws {
        try await startX()
        let d = try await net.spawn(host, log: root + "/dunst.log", ["dunst"], environment: environment)
        pids.append(d)
        try await eventually(10, "dunst to own org.freedesktop.Notifications") {
            let r = try await self.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                        "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Notifications"])
            return r.stdout.contains("boolean true")
        }
    }

    /// Starts the agent and waits until handoffd says it has a launcher.
    func startAgent(_ extra: [String] = [], environment more: [String: String] = [:]) async throws {
        var env = environment
        for (k, v) in more { env[k] = v }
        let pid = try await net.spawn(host, log: agentLog, [try TestEnvironment.binary("handoff-session"), "--log-level", "debug"] + extra,
                                      environment: env)
        agent = pid
        pids.append(pid)
        try await eventually(15, "the session agent on \(host) to take the launcher role") {
            try await self.net.ctl(self.host, "status", "--json").stdout.contains("\"launcher\": true")
        }
    }

    /// Whether the agent is still alive (bad input must not have killed it).
    var isAgentRunning: Bool { agent.map { Glibc.kill($0, 0) == 0 } ?? false }

    /// A process of this session's, stopped with it.
    func adopt(_ pid: Int32) { pids.append(pid) }

    func stopAgent() async {
        guard let agent else { return }
        net.stop(agent, SIGTERM)
        _ = try? await net.wait(agent, timeout: 10)
        self.agent = nil
    }

    /// Runs a command on the host inside this session (its bus, its XDG folders).
    func run(_ args: [String]) async throws -> CommandResult {
        try await net.exec(host, ["env"] + environment.map { "\($0.key)=\($0.value)" } + args)
    }

    func record(_ name: String) throws -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: records + "/" + name + ".json") else { return nil }
        return try JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    func waitForRecord(_ name: String, timeout: Double = 15) async throws -> [String: Any] {
        var found: [String: Any]?
        try await eventually(timeout, "\(name) to be launched on \(host)") {
            found = try self.record(name)
            return found != nil
        }
        return found!
    }

    var log: String { (try? String(contentsOfFile: agentLog, encoding: .utf8)) ?? "" }

    func stop() {
        for pid in pids.reversed() { net.stop(pid, SIGTERM) }
        if let waylandRuntime { try? FileManager.default.removeItem(atPath: waylandRuntime) }
    }
}

extension NetnsRun {
    /// a and b started and paired, and b's desktop session (stopped afterwards): where the
    /// desktop's tests begin.
    static func withPairedDesktop(daemonOptions: [String] = [], _ body: (NetnsRun, DesktopSession) async throws -> Void) async throws {
        try await with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b", daemonOptions)
            try await net.pair("a", "b")
            let desk = try DesktopSession(net, host: "b")
            defer { desk.stop() }
            try await body(net, desk)
        }
    }

    /// Makes an activity current on `origin` (`become-current ARGS`) and waits until
    /// `host` lists it; returns its id.
    @discardableResult
    func offer(from origin: String, to host: String, _ args: [String], stdin: String? = nil) async throws -> String {
        let made = try await ctl(origin, ["become-current", "--json"] + args, stdin: stdin)
        guard made.status == 0, let o = try? JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any],
              let id = o["id"] as? String
        else { throw TestFailure("become-current: \(made)") }
        try await eventually(10, "the offer to reach \(host)") { try await self.ctl(host, "list").stdout.contains(id) }
        return id
    }
}
