import CHandoffSystem
import HandoffCore
import HandoffSystem
import HandoffControlAPI

#if canImport(Glibc)
import Glibc
#endif

/// Why handoff does not work here, and what to do (`handoffctl doctor`, Docs/LocalAPI.md
/// §21): the checks only this side can make (is handoffd reachable, is its socket
/// private, is it installed as a user service, does a firewall drop mDNS or the peer
/// port), then everything handoffd reports about discovery, interfaces and peers.
public enum Doctor {
    public static func run(client: HandoffClient, home: String = DefaultPaths.homeDirectory) async -> [DiagnosticCheck] {
        var checks: [DiagnosticCheck] = []
        let path = client.socketPath
        var info = stat()
        if lstat(path, &info) != 0 {
            checks.append(DiagnosticCheck("daemon", .failed, "handoffd", "not running: no socket at \(path)",
                                          fix: "systemctl --user start handoffd (or handoffd & from a shell)"))
        } else {
            do {
                let status = try await client.status()
                checks.append(DiagnosticCheck("daemon", .ok, "handoffd", "version \(status.version), pid \(status.pid), running since \(status.startedAt.rfc3339)"))
                if let stale = staleDaemon(running: status.version) { checks.append(stale) }
                checks.append(socketCheck(path, info))
            } catch HandoffClientError.daemonNotRunning {
                checks.append(DiagnosticCheck("daemon", .failed, "handoffd", "not running: nobody listens on \(path) (it stopped or crashed)",
                                              fix: "systemctl --user start handoffd; journalctl --user -u handoffd says why it stopped"))
            } catch {
                checks.append(DiagnosticCheck("daemon", .failed, "handoffd", "\(error)", fix: "systemctl --user restart handoffd; journalctl --user -u handoffd says why it failed"))
            }
        }
        checks.append(unitsCheck(home: home))
        var daemonChecks: [DiagnosticCheck] = []
        if checks.first(where: { $0.id == "daemon" })?.status == .ok {
            do { daemonChecks = try await client.diagnostics() } catch {
                daemonChecks = [DiagnosticCheck("diagnostics", .warning, "handoffd's own checks", "could not get them: \(error)")]
            }
        }
        let port = daemonChecks.first { $0.id == "discovery" }.flatMap { peerPort(in: $0.detail) }
        checks.append(firewallCheck(peerPort: port))
        if checks.first(where: { $0.id == "daemon" })?.status == .ok, (try? await client.status())?.launcher == true,
           let sources = try? await client.sources() {
            if let clipboard = sources.first(where: { $0.name == "clipboard" }) { checks.append(clipboardCheck(clipboard)) }
            if let tray = sources.first(where: { $0.name == "tray" }) { checks.append(trayCheck(tray)) }
        }
        return checks + daemonChecks
    }

    /// What the session agent does with the desktop's clipboard (only with an agent: a
    /// headless machine has handoffctl copy and paste alone).
    static func clipboardCheck(_ source: DesktopSource) -> DiagnosticCheck {
        let everywhere = "`handoffctl copy` and `handoffctl paste` work on any workstation"
        if !source.enabled {
            return DiagnosticCheck("clipboard", .ok, "clipboard", source.detail, fix: "handoffctl sources on clipboard")
        }
        // The agent knows this desktop: its fix names the way here (the source's `fix`).
        if let fix = source.fix { return DiagnosticCheck("clipboard", .warning, "clipboard", source.detail, fix: fix + "; " + everywhere) }
        if source.detail.hasPrefix("sharing") { return DiagnosticCheck("clipboard", .ok, "clipboard", source.detail) }
        return DiagnosticCheck("clipboard", .warning, "clipboard", source.detail,
                               fix: "the session agent needs DISPLAY (X11) or WAYLAND_DISPLAY with a data-control protocol (sway, KWin); \(everywhere)")
    }

    /// Whether a panel shows the tray icon here; if not, what this desktop needs (the
    /// agent says, in the source's `fix`).
    static func trayCheck(_ source: DesktopSource) -> DiagnosticCheck {
        guard source.enabled, let fix = source.fix else { return DiagnosticCheck("tray", .ok, "Tray icon", source.detail) }
        return DiagnosticCheck("tray", .warning, "Tray icon", source.detail, fix: fix)
    }

    static func socketCheck(_ path: String, _ info: stat) -> DiagnosticCheck {
        let mine = info.st_uid == getuid()
        let others = info.st_mode & 0o077 != 0
        var dirInfo = stat()
        let dir = String(path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/"))
        let dirPrivate = stat(dir.isEmpty ? "/" : dir, &dirInfo) == 0 && dirInfo.st_mode & 0o077 == 0 && dirInfo.st_uid == getuid()
        if !mine {
            return DiagnosticCheck("socket", .failed, "Control socket", "\(path) belongs to uid \(info.st_uid), not you (\(getuid()))",
                                   fix: "stop the other user's handoffd, or use your own socket path (--socket)")
        }
        if others && !dirPrivate {
            return DiagnosticCheck("socket", .warning, "Control socket", "\(path) and its folder let other users connect (handoffd still refuses them by uid)",
                                   fix: "chmod 700 '\(dir)'")
        }
        return DiagnosticCheck("socket", .ok, "Control socket", "\(path), yours alone")
    }

    /// A handoffd older or newer than this handoffctl: an upgrade replaced the files while it
    /// ran (the package restarts it where it can; a source install does not).
    public static func staleDaemon(running: String, installed: String = APIVersion.software) -> DiagnosticCheck? {
        running == installed ? nil
            : DiagnosticCheck("version", .warning, "Version", "handoffd \(running) is running, but handoffctl is \(installed): an upgrade is not in effect yet",
                              fix: "systemctl --user restart handoffd")
    }

    static func unitsCheck(home: String, system: String = "") -> DiagnosticCheck {
        let userDir = home + "/.config/systemd/user"
        let dirs = [userDir, system + "/etc/systemd/user", system + "/usr/lib/systemd/user", system + "/usr/local/lib/systemd/user"]
        let found = dirs.filter { access($0 + "/handoffd.service", F_OK) == 0 && access($0 + "/handoffd.socket", F_OK) == 0 }
        guard let dir = found.first else {
            return DiagnosticCheck("units", .warning, "systemd user units", "handoffd.service and handoffd.socket are not installed, so nothing starts handoffd at login",
                                   fix: "install the handoff package (sudo apt install ./handoff_*.deb) or run scripts/install, then systemctl --user enable --now handoffd.socket")
        }
        // A user's mask (a link to /dev/null) wins over any enablement.
        var target = [CChar](repeating: 0, count: 64)
        for unit in ["handoffd.socket", "handoffd.service"] {
            let n = readlink(userDir + "/" + unit, &target, target.count - 1)
            if n > 0, String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "/dev/null" {
                return DiagnosticCheck("units", .warning, "systemd user units", "\(unit) is masked, so nothing starts handoffd",
                                       fix: "systemctl --user unmask \(unit) && systemctl --user start handoffd.socket")
            }
        }
        // Enabled by the user (~/.config) or for every user (/etc: the package does that).
        let enabled = [userDir, system + "/etc/systemd/user"].contains { base in
            access(base + "/sockets.target.wants/handoffd.socket", F_OK) == 0 || access(base + "/default.target.wants/handoffd.service", F_OK) == 0
        }
        return enabled
            ? DiagnosticCheck("units", .ok, "systemd user units", "installed in \(dir) and enabled")
            : DiagnosticCheck("units", .warning, "systemd user units", "installed in \(dir) but not enabled: handoffd does not start at login",
                              fix: "systemctl --user enable --now handoffd.socket")
    }

    /// Rules that drop or reject mDNS (UDP 5353) or the peer port, from nftables or
    /// iptables; reading them needs root.
    static func firewallCheck(peerPort: Int?) -> DiagnosticCheck {
        var rules: String?
        for tool in [["/usr/sbin/nft", "list", "ruleset"], ["/usr/sbin/iptables-save"], ["/sbin/iptables-save"]] where access(tool[0], X_OK) == 0 {
            if let out = Subprocess.output(tool), !out.isEmpty || tool[0].hasSuffix("nft") { rules = (rules ?? "") + out }
        }
        guard let rules else {
            return DiagnosticCheck("firewall", .warning, "Firewall", "not checked: reading the firewall rules needs root",
                                   fix: "sudo handoffctl doctor --socket \"$XDG_RUNTIME_DIR/handoff/handoffd.sock\"")
        }
        let ports = ["5353", "mdns"] + (peerPort.map { [String($0)] } ?? [])
        let blocking = rules.split(separator: "\n").filter { line in
            let l = line.lowercased()
            let drops = l.contains(" drop") || l.contains(" reject") || l.contains("-j drop") || l.contains("-j reject")
            return drops && ports.contains { p in l.contains("dport \(p)") || l.contains("--dport \(p)") || l.contains("dport { \(p)") }
        }
        if blocking.isEmpty {
            return DiagnosticCheck("firewall", .ok, "Firewall", "no rule drops mDNS (UDP 5353)\(peerPort.map { " or the peer port (TCP \($0))" } ?? "")")
        }
        return DiagnosticCheck("firewall", .failed, "Firewall", "these rules drop what handoff needs: \(blocking.map { $0.trimmingCharacters() }.joined(separator: "; "))",
                               fix: "allow it first, e.g. sudo nft insert rule inet filter input udp dport 5353 accept\(peerPort.map { "; sudo nft insert rule inet filter input tcp dport \($0) accept" } ?? "")")
    }

    /// "… on port 7443 …" → 7443.
    static func peerPort(in text: String) -> Int? {
        let words = text.split(separator: " ")
        guard let i = words.firstIndex(of: "port"), i + 1 < words.count else { return nil }
        return Int(words[i + 1].prefix { $0.isNumber })
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// Runs a command and returns its standard output, or nil if it failed.
enum Subprocess {
    static func output(_ argv: [String]) -> String? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        handoff_spawn_actions_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        handoff_spawnattr_clean_signals(&attributes)
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, environ)
        close(fds[1])
        guard rc == 0 else { close(fds[0]); return nil }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fds[0], &buf, buf.count)
            if n <= 0 { break }
            out += buf[0..<n]
            if out.count > 8 << 20 { break }
        }
        close(fds[0])
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        guard status == 0 else { return nil }
        return String(decoding: out, as: UTF8.self)
    }
}
