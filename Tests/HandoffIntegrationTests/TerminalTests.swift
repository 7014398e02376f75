import Foundation
import HandoffClient
import HandoffCore
import Testing
#if canImport(Glibc)
import Glibc
import HandoffTestSupport
#endif

/// `handoff.terminal` between two workstations without a desktop: `offer-terminal` on a,
/// `continue` on b prints the ssh command (every word quoted), a's handoffd names its
/// host (`ssh-host`), and fields that could make a command do more are refused at both ends.
extension WorkstationTests {
@Suite struct TerminalTests {
    let across = AcrossWorkstationsTests()

    /// The remote command is read by the user's login shell on the origin, whichever it is:
    /// sh, bash, zsh and fish all run it into the directory (spaces and parentheses too),
    /// then the login shell ($SHELL, a stand-in here that prints where it started).
    @Test(arguments: ["/bin/sh", "/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"])
    func theRemoteCommandWorksInEveryLoginShell(_ shell: String) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("term-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/My Notes (old)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let login = root + "/login-shell"
        try "#!/bin/sh\necho \"started in $PWD with $*\"\n".write(toFile: login, atomically: true, encoding: .utf8)
        chmod(login, 0o755)
        let remote = TerminalSession(host: "desk", directory: directory).remoteCommand
        let r = try await CommandLineTool.run(shell, ["-c", remote], environment: ["SHELL": login, "PATH": "/usr/bin:/bin", "HOME": root])
        #expect(r.status == 0 && r.stdout == "started in \(directory) with -l\n", "\(shell): \(r)")
    }

    /// The real thing: a's tmux session `work` in a project directory, a throwaway sshd on
    /// a (its own host key, a test key authorized), and on b the command `continue` gives,
    /// run in a pseudo-terminal: it attaches to a's session, and what is typed there on a
    /// shows on b.
    @Test func continuingATerminalAttachesToItsTmuxSessionOverSsh() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let ssh = try await SshHost.start(net, on: "a")
            let (project, address, tmux) = (ssh.project, ssh.address, ssh.tmux)
            let made = try await net.ctl("a", "offer-terminal", "--host", address, "--port", "2222", "--user", "root",
                                         "--tmux-session", "work", "--directory", project)
            #expect(made.status == 0, "\(made)")
            try await eventually(10, "the terminal to reach b") { try await net.ctl("b", "list").stdout.contains(WellKnownActivityType.terminal) }
            let continued = try across.json(try await net.ctl("b", "continue", "--json"))
            let list = continued["terminal"]?.objectValue?["argv"]?.arrayValue
            let argv = try #require(list, "\(continued)").compactMap(\.stringValue)
            #expect(argv.first == "ssh")
            // The test's own key and no known_hosts of the machine's: options a user keeps in
            // ~/.ssh/config, put before the command's own arguments.
            let command = (["ssh"] + ssh.clientOptions + argv.dropFirst()).map(TerminalSession.quoted).joined(separator: " ")
            let typescript = net.directory + "/b-terminal.txt"
            let client = try await net.spawn("b", log: net.directory + "/b-script.log", ["script", "-q", "-e", "-f", "-c", command, typescript],
                                             environment: ["TERM": "xterm"])
            defer { net.stop(client, SIGKILL) }
            try await eventually(15, "b to attach to a's session") {
                try await net.exec("a", tmux + ["list-clients", "-t", "work"]).stdout.contains("work")
            }
            // Typed on a, in the session b is attached to (split so the typing is not the marker).
            _ = try await net.exec("a", tmux + ["send-keys", "-t", "work", "echo MARK\"\"ER-\"$((6*7))\"", "Enter"])
            try await eventually(15, "a's marker on b's terminal") {
                ((try? String(contentsOfFile: typescript, encoding: .utf8)) ?? "").contains("MARKER-42")
            }
            // One session, not a second one made by b.
            #expect(try await net.exec("a", tmux + ["list-sessions", "-F", "#S"]).stdout.split(separator: "\n") == ["work"])
            _ = try await net.exec("a", tmux + ["kill-server"])
            net.stop(client, SIGKILL)

            // A shell outside tmux, in a directory with a space: b gets a login shell on a, in it.
            let plain = project + "/two words"
            try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
            _ = try await net.ctl("a", "offer-terminal", "--host", address, "--port", "2222", "--user", "root", "--no-tmux", "--directory", plain)
            var second: [String] = []
            try await eventually(10, "the plain shell to reach b") {
                second = try across.json(try await net.ctl("b", "continue", "--json"))["terminal"]?.objectValue?["argv"]?.arrayValue?
                    .compactMap(\.stringValue) ?? []
                return second.last?.contains("two words") == true
            }
            let plainCommand = (["ssh"] + ssh.clientOptions + second.dropFirst()).map(TerminalSession.quoted).joined(separator: " ")
            let shell = try await net.spawn("b", log: net.directory + "/b-plain.log", ["script", "-q", "-e", "-f", "-c", plainCommand, "/dev/null"],
                                            environment: ["TERM": "xterm"])
            defer { net.stop(shell, SIGKILL) }
            try await eventually(15, "a login shell on a in that directory") { Self.shells(in: plain) > 0 }
        }
    }

    /// Shells (bash, sh) whose working directory is `directory`: the namespaces share one
    /// process table.
    static func shells(in directory: String) -> Int {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return pids.filter { pid in
            guard Int(pid) != nil, let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                  ["bash", "sh"].contains(comm.trimmingCharacters(in: .whitespacesAndNewlines)) else { return false }
            return (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd")) == directory
        }.count
    }

    /// `handoffctl shell-integration` in bash, zsh and fish: each `cd` offers the shell
    /// again, in the new directory, and the newer offer of one shell replaces its older one.
    @Test(arguments: ["bash", "zsh", "fish"])
    func theShellIntegrationFollowsTheDirectory(_ shell: String) async throws {
        try await NetnsRun.with(["a"]) { net in
            try await net.startDaemon("a", ["--ssh-host", "desk.example.org"])
            let first = net.directory + "/first", second = net.directory + "/second dir"
            for d in [first, second] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
            let bin = URL(fileURLWithPath: try TestEnvironment.binary("handoffctl")).deletingLastPathComponent().path
            let script: String
            switch shell {
            case "fish":
                script = "handoffctl shell-integration fish | source; cd '\(first)'; sleep 1; cd '\(second)'; sleep 1"
            default:
                // Interactive (-i), so the prompt hooks run: before each line read.
                script = "eval \"$(handoffctl shell-integration \(shell))\"\ncd '\(first)'\nsleep 1\ncd '\(second)'\nsleep 1\nexit\n"
            }
            let argv = shell == "fish" ? ["fish", "--no-config", "-c", script] : shell == "zsh" ? ["zsh", "-f", "-i"] : ["bash", "--norc", "-i"]
            let r = try await net.exec("a", ["env", "PATH=\(bin):/usr/bin:/bin", "HANDOFF_SOCKET=\(net.socket("a"))"] + argv,
                                       stdin: shell == "fish" ? nil : script)
            #expect(r.status == 0, "\(r)")
            let client = HandoffClient(socketPath: net.socket("a"))
            try await eventually(10, "the current activity to be the shell in the second directory") {
                try await client.current()?.activity.userInfo["directory"] == .string(second)
            }
            let current = try #require(try await client.current())
            #expect(current.activity.activityType == WellKnownActivityType.terminal)
            #expect(current.activity.userInfo["host"] == .string("desk.example.org"))
            let live = try await client.activities().filter { $0.activity.activityType == WellKnownActivityType.terminal && $0.state != .invalidated }
            #expect(live.count == 1, "one shell, one terminal offered: \(live.map(\.activity.userInfo))")
        }
    }

    /// With a desktop, `continue` opens the user's terminal emulator (xdg-terminal-exec, a
    /// stand-in here that records its arguments) running the ssh command. (Which terminal
    /// is chosen, and none at all: `TerminalLauncherTests`.)
    @Test func aDesktopOpensTheTerminalEmulator() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a", ["--ssh-host", "desk.example.org"])
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let desk = try DesktopSession(net, host: "b")
            defer { desk.stop() }
            let bin = desk.root + "/bin"
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            let record = TestEnvironment.packageRoot + "/Tests/Fixtures/record-launch"
            try "#!/bin/sh\nexec /usr/bin/python3 \(record) --as terminal \"$@\"\n".write(toFile: bin + "/xdg-terminal-exec", atomically: true, encoding: .utf8)
            chmod(bin + "/xdg-terminal-exec", 0o755)
            try await desk.startBus()
            try await desk.startAgent(["--no-notifications"], environment: ["PATH": bin + ":/usr/bin:/bin"])
            _ = try await net.ctl("a", "offer-terminal", "--directory", "/srv/proj", "--tmux-session", "work", "--user", "ann")
            try await eventually(10, "the terminal to reach b") { try await net.ctl("b", "list").stdout.contains(WellKnownActivityType.terminal) }
            let r = try await net.ctl("b", "continue")
            #expect(r.status == 0 && r.stdout.contains("opened a terminal (xdg-terminal-exec)"), "\(r)")
            let launched = try await desk.waitForRecord("terminal")
            #expect(launched["argv"] as? [String] == ["ssh", "-t", "-l", "ann", "--", "desk.example.org", "tmux new-session -A -s work -c /srv/proj"],
                    "\(launched)")
        }
    }

    @Test func aTerminalContinuesAsAnSshCommand() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a", ["--ssh-host", "desk.example.org"])
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let made = try await net.ctl("a", "offer-terminal", "--directory", "/srv/proj", "--tmux-session", "work", "--user", "ann")
            #expect(made.status == 0, "\(made)")
            try await eventually(10, "the terminal to reach b") { try await net.ctl("b", "list").stdout.contains(WellKnownActivityType.terminal) }
            let r = try await net.ctl("b", "continue")
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("ssh -t -l ann -- desk.example.org 'tmux new-session -A -s work -c /srv/proj'"), "\(r)")
            let json = try across.json(try await net.ctl("b", "continue", "--json"))
            #expect(json["terminal"]?.objectValue?["argv"] == .array(["ssh", "-t", "-l", "ann", "--", "desk.example.org",
                                                                       "tmux new-session -A -s work -c /srv/proj"].map(JSONValue.string)))

            // No tmux, a directory with a space; the host is a's ssh-host.
            _ = try await net.ctl("a", "offer-terminal", "--directory", "/home/ann/My Notes", "--no-tmux", "--user", "ann", "--port", "2222")
            try await eventually(10, "the second terminal to reach b") {
                try await net.ctl("b", "continue").stdout.contains("sh '\\''/home/ann/My Notes'\\''")
            }

            // What a terminal reports by OSC 7 of a shell over ssh on another host: that host.
            let reported = try await net.ctl("a", "offer-terminal", "--osc7", "file://build-box/srv/a%20b", "--no-tmux", "--user", "ann")
            #expect(reported.status == 0, "\(reported)")
            try await eventually(10, "the reported terminal to reach b") {
                try await net.ctl("b", "continue").stdout.contains("ssh -t -l ann -- build-box ")
            }
            let refused = try await net.ctl("a", "offer-terminal", "--osc7", "http://x/y")
            #expect(refused.status != 0 && refused.stderr.contains("--osc7"), "\(refused)")

            // What could make the command do more is refused by a's handoffd, with the field named.
            for (flag, value) in [("--directory", "/srv/$(touch /tmp/pwned)"), ("--directory", "/srv/../etc"), ("--directory", "srv"),
                                  ("--tmux-session", "work;reboot"), ("--host", "-oProxyCommand=touch /tmp/pwned"), ("--user", "ann$(id)")] {
                let bad = try await net.ctl("a", "offer-terminal", "\(flag)=\(value)", "--directory=" + (flag == "--directory" ? value : "/srv"))
                #expect(bad.status != 0 && bad.stderr.contains("userInfo."), "\(flag) \(value): \(bad)")
            }
            let raw = try await net.ctl("a", "become-current", "--type", WellKnownActivityType.terminal, "--info", "directory=/srv/a\nb")
            #expect(raw.status != 0 && raw.stderr.contains("userInfo.directory"), "\(raw)")
            #expect(!FileManager.default.fileExists(atPath: "/tmp/pwned"))
        }
    }

    /// A plain shell in a folder b syncs too (a configured synced root, at another path
    /// there): b opens its own copy in a local terminal, no ssh. The terminal is a desktop
    /// entry of the TerminalEmulator category (no xdg-terminal-exec, no x-terminal-emulator
    /// on b), started in that directory with the command after its `X-TerminalArgExec`.
    @Test func aTerminalInAFolderSyncedHereOpensLocallyInItsCopy() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            let onA = net.directory + "/a-proj", onB = net.directory + "/b-copy of proj"
            for d in [onA + "/notes/x y", onB + "/notes/x y", onA + "/elsewhere"] {
                try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
            }
            try await net.startDaemon("a", ["--ssh-host", "desk.example.org", "--synced-root", "proj=" + onA])
            try await net.startDaemon("b", ["--synced-root", "proj=" + onB])
            try await net.pair("a", "b")
            _ = try await net.ctl("a", "offer-terminal", "--directory", onA + "/notes/x y", "--no-tmux")
            try await eventually(10, "the terminal to reach b") { try await net.ctl("b", "list").stdout.contains(WellKnownActivityType.terminal) }
            let headless = try await net.ctl("b", "continue")
            #expect(headless.status == 0 && headless.stdout.contains("cd -- '\(onB)/notes/x y'"), "\(headless)")
            let json = try across.json(try await net.ctl("b", "continue", "--json"))
            let plan = try TerminalContinuation(json: try #require(json["terminal"], "\(json)"))
            #expect(plan.route == .local && plan.directory == onB + "/notes/x y", "\(plan)")

            let desk = try DesktopSession(net, host: "b")
            defer { desk.stop() }
            try desk.addEntry("my-terminal.desktop", name: "My Terminal", lines: ["Categories=System;TerminalEmulator;", "X-TerminalArgExec=--"],
                              exec: "/usr/bin/python3 \(DesktopSession.recorder) --as terminal --window")
            try await desk.startBus()
            try await desk.startAgent(["--no-notifications"], environment: ["PATH": "/usr/bin:/bin"])
            let r = try await net.ctl("b", "continue")
            #expect(r.status == 0 && r.stdout.contains("opened a terminal (My Terminal)"), "\(r)")
            let launched = try await desk.waitForRecord("terminal")
            #expect(launched["argv"] as? [String] == ["--window", "--"] + TerminalSession.loginShell(in: onB + "/notes/x y"), "\(launched)")
            #expect(launched["cwd"] as? String == onB + "/notes/x y")

            // Outside the synced folder, or in tmux (its programs live on a): ssh as before.
            _ = try await net.ctl("a", "offer-terminal", "--directory", onA + "/elsewhere", "--no-tmux")
            try await eventually(10, "the second terminal to reach b") {
                try across.json(try await net.ctl("b", "continue", "--json"))["terminal"]?.objectValue?["route"] == .string("ssh")
            }
            _ = try await net.ctl("a", "offer-terminal", "--directory", onA + "/notes/x y", "--tmux-session", "work")
            try await eventually(10, "the tmux terminal to reach b") {
                let j = try across.json(try await net.ctl("b", "continue", "--json"))
                return j["terminal"]?.objectValue?["argv"]?.arrayValue?.last == .string("tmux new-session -A -s work -c '\(onA)/notes/x y'")
            }
        }
    }

    /// With `terminal-transport = mosh` on b and mosh on both: the command is mosh's, it
    /// attaches to a's tmux session (mosh-server started over the same sshd), and a's
    /// marker shows on b.
    @Test func moshWhenPreferredAttachesToo() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b", ["--terminal-transport", "mosh"])
            try await net.pair("a", "b")
            let ssh = try await SshHost.start(net, on: "a")
            _ = try await net.ctl("a", "offer-terminal", "--host", ssh.address, "--port", "2222", "--user", "root",
                                  "--tmux-session", "work", "--directory", ssh.project)
            try await eventually(10, "the terminal to reach b") { try await net.ctl("b", "list").stdout.contains(WellKnownActivityType.terminal) }
            let continued = try across.json(try await net.ctl("b", "continue", "--json"))
            let argv = try #require(continued["terminal"]?.objectValue?["argv"]?.arrayValue, "\(continued)").compactMap(\.stringValue)
            #expect(Array(argv.prefix(4)) == ["mosh", "--ssh=ssh -p 2222", "--", "root@\(ssh.address)"], "\(argv)")
            #expect(Array(argv.dropFirst(4)) == ["tmux", "new-session", "-A", "-s", "work", "-c", ssh.project])
            // The test's key and no known_hosts, in mosh's own ssh option.
            let command = (["mosh", "--ssh=ssh -p 2222 " + ssh.clientOptions.joined(separator: " ")] + argv.dropFirst(2))
                .map(TerminalSession.quoted).joined(separator: " ")
            let typescript = net.directory + "/b-mosh.txt"
            // A terminal has a size; script(1)'s pty has none until told, and mosh-client needs one.
            let client = try await net.spawn("b", log: net.directory + "/b-mosh.log",
                                             ["script", "-q", "-e", "-f", "-c", "stty rows 30 cols 120; exec " + command, typescript],
                                             environment: ["TERM": "xterm", "LANG": "C.UTF-8"])
            defer { net.stop(client, SIGKILL) }
            try await eventually(20, "b to attach to a's session over mosh") {
                try await net.exec("a", ssh.tmux + ["list-clients", "-t", "work"]).stdout.contains("work")
            }
            _ = try await net.exec("a", ssh.tmux + ["send-keys", "-t", "work", "echo MARK\"\"ER-\"$((6*7))\"", "Enter"])
            try await eventually(15, "a's marker on b's terminal") {
                ((try? String(contentsOfFile: typescript, encoding: .utf8)) ?? "").contains("MARKER-42")
            }
            _ = try await net.exec("a", ssh.tmux + ["kill-server"])
        }
    }
}

/// A throwaway sshd on a namespace host (its own host key, a test key authorized, port
/// 2222) with a tmux session `work` in a project directory, for continuing terminals.
struct SshHost {
    let directory: String
    let project: String
    let address: String
    let tmux: [String]

    /// What a user keeps in ~/.ssh/config, for the test's own key and no known_hosts.
    var clientOptions: [String] {
        ["-F", "/dev/null", "-i", "\(directory)/client", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
         "-o", "BatchMode=yes", "-o", "LogLevel=ERROR"]
    }

    static func start(_ net: NetnsRun, on host: String) async throws -> SshHost {
        let dir = net.directory + "/ssh", project = net.directory + "/proj", tmuxDir = net.directory + "/tmux-" + host
        for d in [dir, project, tmuxDir] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        chmod(dir, 0o700)
        chmod(tmuxDir, 0o700)
        for key in ["host", "client"] {
            let r = try await CommandLineTool.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", "\(dir)/\(key)"], environment: net.environment)
            #expect(r.status == 0, "\(r)")
        }
        try FileManager.default.copyItem(atPath: "\(dir)/client.pub", toPath: "\(dir)/authorized_keys")
        let address = try await net.address(host)
        try """
            ListenAddress \(address):2222
            HostKey \(dir)/host
            PidFile \(dir)/sshd.pid
            AuthorizedKeysFile \(dir)/authorized_keys
            PermitRootLogin prohibit-password
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            UsePAM no
            StrictModes no
            UseDNS no
            PrintMotd no
            SetEnv TMUX_TMPDIR=\(tmuxDir) LANG=C.UTF-8

            """.write(toFile: "\(dir)/sshd_config", atomically: true, encoding: .utf8)
        try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        _ = try await net.spawn(host, log: "\(dir)/sshd.log", ["/usr/sbin/sshd", "-D", "-e", "-f", "\(dir)/sshd_config"])
        try await eventually(10, "sshd on \(host) to listen") {
            try await net.exec(host, ["ss", "-Hltn", "sport = :2222"]).stdout.contains("2222")
        }
        let tmux = ["env", "TMUX_TMPDIR=\(tmuxDir)", "tmux"]
        let started = try await net.exec(host, tmux + ["new-session", "-d", "-s", "work", "-c", project])
        #expect(started.status == 0, "\(started)")
        return SshHost(directory: dir, project: project, address: address, tmux: tmux)
    }
}
}
