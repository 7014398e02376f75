import Foundation
import HandoffTestSupport

/// Workstations as network namespaces (scripts/netns): each host has its own D-Bus,
/// avahi-daemon and handoffd; nothing reaches the machine's real interfaces. Needs root.
final class NetnsRun: @unchecked Sendable {
    let name: String
    let directory: String
    private(set) var daemons: [String: Int32] = [:]
    private var isDown = false

    static var script: String { TestEnvironment.packageRoot + "/scripts/netns" }

    static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/avahi-daemon")
    }

    private init(name: String) {
        self.name = name
        directory = "/tmp/hnt-" + name
    }

    /// Creates the hosts; `body` runs with them, and they are torn down afterwards.
    static func with<T>(_ hosts: [String], _ body: (NetnsRun) async throws -> T) async throws -> T {
        let run = NetnsRun(name: "t" + String(UInt32.random(in: 0...UInt32.max), radix: 36))
        let up = try await CommandLineTool.run("/bin/bash", [script, "up", run.name] + hosts, environment: ProcessInfo.processInfo.environment)
        guard up.status == 0 else { throw TestFailure("scripts/netns up failed: \(up)") }
        try FileManager.default.createDirectory(atPath: run.directory, withIntermediateDirectories: true)
        do {
            let result = try await body(run)
            await run.down()
            return result
        } catch {
            // Leave the daemons' logs in the failure report: they are the evidence.
            let logs = run.logs()
            await run.down()
            throw TestFailure("\(error)\n--- daemon logs ---\n\(logs)")
        }
    }

    func down() async {
        guard !isDown else { return }
        isDown = true
        _ = try? await CommandLineTool.run("/bin/bash", [NetnsRun.script, "down", name], environment: ProcessInfo.processInfo.environment)
        SanitizerReports.check(directory)
        // HANDOFF_KEEP_TEST_DIRS keeps the logs (daemons, agents, captures), as DaemonProcess does.
        if ProcessInfo.processInfo.environment["HANDOFF_KEEP_TEST_DIRS"] == nil { try? FileManager.default.removeItem(atPath: directory) }
    }

    func socket(_ host: String) -> String { "\(directory)/\(host)/run/handoff/handoffd.sock" }
    func stateDirectory(_ host: String) -> String { "\(directory)/\(host)/state/handoff" }
    func logPath(_ host: String) -> String { "\(directory)/\(host).log" }

    func logs() -> String {
        daemons.keys.sorted().map { h in
            let text = (try? String(contentsOfFile: logPath(h), encoding: .utf8)) ?? ""
            return "[\(h)]\n" + text.split(separator: "\n").suffix(40).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// Starts handoffd on `host` (device name "ws-HOST") and waits until it answers.
    @discardableResult
    func startDaemon(_ host: String, _ extra: [String] = []) async throws -> Int32 {
        try FileManager.default.createDirectory(atPath: "\(directory)/\(host)/run", withIntermediateDirectories: true)
        let spawn = try await CommandLineTool.run("/bin/bash", [
            NetnsRun.script, "spawn", name, host, logPath(host), "--", "env",
            "XDG_RUNTIME_DIR=\(directory)/\(host)/run", "XDG_STATE_HOME=\(directory)/\(host)/state",
            "XDG_CONFIG_HOME=\(directory)/\(host)/config",
            try TestEnvironment.binary("handoffd"), "--name", "ws-\(host)", "--log-level", "debug",
        ] + extra, environment: environment)
        guard spawn.status == 0, let pid = Int32(spawn.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("could not start handoffd on \(host): \(spawn)")
        }
        daemons[host] = pid
        try await eventually("handoffd on \(host) to answer") {
            try await self.ctl(host, "status").status == 0
        }
        return pid
    }

    /// Where scripts/netns records the processes it started (and their exits).
    var exitDirectory: String {
        let base = ProcessInfo.processInfo.environment["HANDOFF_NETNS_STATE"]
            ?? (access("/run", W_OK) == 0 ? "/run/handoff-netns" : "/tmp/handoff-netns")
        return "\(base)/\(name)/exit"
    }

    /// Signals a process started by `spawn`, unless it has exited already: this kernel
    /// reuses PIDs quickly (pid_max 32768), and a stale PID may be another test's process.
    func stop(_ pid: Int32, _ signal: Int32 = SIGKILL) {
        guard access("\(exitDirectory)/\(pid).exit", F_OK) != 0 else { return }
        Glibc.kill(pid, signal)
    }

    func kill(_ host: String, _ signal: Int32 = SIGKILL) async {
        guard let pid = daemons[host] else { return }
        stop(pid, signal)
        _ = try? await CommandLineTool.run("/bin/bash", [NetnsRun.script, "wait", name, String(pid), "10"], environment: environment)
    }

    /// Runs handoffctl on `host` against that host's daemon.
    func ctl(_ host: String, _ args: String..., stdin: String? = nil) async throws -> CommandResult {
        try await ctl(host, args, stdin: stdin)
    }

    func ctl(_ host: String, _ args: [String], stdin: String? = nil) async throws -> CommandResult {
        var env = environment
        env["HANDOFF_SOCKET"] = socket(host)
        return try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "exec", name, host, "--", try TestEnvironment.binary("handoffctl")] + args,
                                             environment: env, stdin: stdin)
    }

    /// Runs any command on `host`.
    func exec(_ host: String, _ args: [String], stdin: String? = nil) async throws -> CommandResult {
        try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "exec", name, host, "--"] + args, environment: environment, stdin: stdin)
    }

    /// Starts a long-running command on `host`; returns its pid (kill it directly).
    func spawn(_ host: String, log: String, _ args: [String], environment extra: [String: String] = [:]) async throws -> Int32 {
        var env = environment
        env["HANDOFF_SOCKET"] = socket(host)
        for (k, v) in extra { env[k] = v }
        let r = try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "spawn", name, host, log, "--"] + args, environment: env)
        guard r.status == 0, let pid = Int32(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("spawn failed: \(r)")
        }
        return pid
    }

    /// Waits for a process started by `spawn` to exit: its status, or nil after `timeout` seconds.
    func wait(_ pid: Int32, timeout: Double) async throws -> Int32? {
        let r = try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "wait", name, String(pid), String(Int(timeout.rounded(.up)))],
                                              environment: environment)
        if r.status == 255 && r.stderr.contains("timeout waiting") { return nil }
        return r.status
    }

    /// Resident memory of a process, in bytes (VmRSS).
    static func residentBytes(_ pid: Int32) -> Int { statusBytes(pid, "VmRSS:") }

    /// The most resident memory a process has had since it started, in bytes (VmHWM).
    static func peakResidentBytes(_ pid: Int32) -> Int { statusBytes(pid, "VmHWM:") }

    private static func statusBytes(_ pid: Int32, _ field: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
              let kb = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kb * 1024
    }

    func address(_ host: String) async throws -> String {
        try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "addr", name, host], environment: environment)
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// HOST's IPv6 link-local address, without its zone.
    func address6(_ host: String) async throws -> String {
        let text = try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "addr6", name, host], environment: environment)
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return String(text.split(separator: "%").first ?? "")
    }

    func deviceID(_ host: String) async throws -> String {
        try await ctl(host, "id").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The peer port handoffd on `host` listens on (from its log).
    func peerPort(_ host: String) throws -> Int {
        let log = (try? String(contentsOfFile: logPath(host), encoding: .utf8)) ?? ""
        guard let line = log.split(separator: "\n").last(where: { $0.contains("peer listener ready") }),
              let part = line.split(separator: " ").first(where: { $0.hasPrefix("port=") }), let port = Int(part.dropFirst(5))
        else { throw TestFailure("no peer port in \(host)'s log") }
        return port
    }

    /// Both trust each other and are connected.
    func pair(_ x: String, _ y: String) async throws {
        let ix = try await deviceID(x), iy = try await deviceID(y)
        _ = try await ctl(x, "trust", iy)
        _ = try await ctl(y, "trust", ix)
        try await eventually(20, "\(x) and \(y) to connect") {
            try await self.isConnected(x, to: iy)
        }
        // Both may have dialled at once: the duplicate is dropped (or replaces the first
        // link) without either side listing the other as disconnected, so connected on
        // both sides is the fact to wait for.
        try await eventually(20, "\(x) and \(y) to list each other as connected") {
            let xy = try await self.isConnected(x, to: iy)
            let yx = try await self.isConnected(y, to: ix)
            return xy && yx
        }
    }

    /// `host`'s pairing window (GET /v1/pairing), as JSON.
    func pairingStatus(_ host: String) async throws -> [String: Any] {
        let r = try await exec(host, ["curl", "-s", "--unix-socket", socket(host), "http://localhost/v1/pairing"])
        return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// Whether this side's confirmation of the code has reached `host`'s handoffd.
    func confirmedHere(_ host: String) async throws -> Bool {
        try await pairingStatus(host)["confirmedHere"] as? Bool == true
    }

    func isConnected(_ host: String, to id: String) async throws -> Bool {
        let peers = try await ctl(host, "peers", "--json").stdout
        guard let data = peers.data(using: .utf8),
              let o = try JSONSerialization.jsonObject(with: data) as? [String: Any], let list = o["peers"] as? [[String: Any]]
        else { return false }
        return list.contains { ($0["id"] as? String) == id && ($0["connected"] as? Bool) == true }
    }
}
