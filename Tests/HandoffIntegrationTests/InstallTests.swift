import Foundation
import Testing

/// What the README's install step puts on a machine, and that it works there: the
/// binaries, the units, shell completions each shell loads, and a man page that says what
/// this handoffctl accepts.
@Suite struct InstallTests {
    func run(_ tool: String, _ args: [String], environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> CommandResult {
        try await CommandLineTool.run(tool, args, environment: environment)
    }

    static let subcommands = ["status", "become-current", "current", "update", "resign", "invalidate", "watch", "id", "trust", "untrust",
                              "peers", "list", "continue", "pair", "devices", "remove", "sources", "forget"]

    @Test func theInstallScriptPutsEverythingInPlace() async throws {
        let home = try TestEnvironment.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = home
        env["XDG_CONFIG_HOME"] = home + "/config"
        let r = try await run("/bin/bash", [TestEnvironment.packageRoot + "/scripts/install", "--from", TestEnvironment.binDirectory, "--prefix", home + "/usr"],
                              environment: env)
        #expect(r.status == 0, "\(r)")
        let fm = FileManager.default
        for b in ["handoffd", "handoff-history", "handoffctl", "handoff-session", "handoff-browser-host"] {
            #expect(fm.isExecutableFile(atPath: "\(home)/usr/bin/\(b)"), "\(b)")
        }
        for f in ["usr/share/bash-completion/completions/handoffctl", "usr/share/zsh/site-functions/_handoffctl",
                  "config/fish/completions/handoffctl.fish", "usr/share/man/man1/handoffctl.1", "usr/share/man/man1/handoffd.1",
                  "usr/share/man/man1/handoff-session.1", "usr/share/icons/hicolor/scalable/apps/handoff.svg",
                  "config/systemd/user/handoffd.socket", "config/systemd/user/handoff-session.service",
                  "usr/share/icons/hicolor/scalable/apps/handoff-available.svg", "usr/share/applications/org.handoff.Handoff.desktop",
                  "usr/share/gnome-shell/search-providers/org.handoff.Handoff.search-provider.ini",
                  "usr/share/krunner/dbusplugins/org.handoff.Handoff.desktop", "usr/share/dbus-1/services/org.handoff.Session.service",
                  "usr/share/gnome-shell/extensions/handoff@handoff.org/metadata.json",
                  "usr/share/gnome-shell/extensions/handoff@handoff.org/presence.js",
                  "usr/share/gnome-shell/extensions/handoff@handoff.org/extension.js"] {
            #expect(fm.fileExists(atPath: "\(home)/\(f)"), "\(f)")
        }
        // The GNOME Shell extension's entry is the one this machine's GNOME Shell loads
        // (43 and 44: the script; 45 on, or none installed: the ES module).
        let entry = try fm.destinationOfSymbolicLink(atPath: "\(home)/usr/share/gnome-shell/extensions/handoff@handoff.org/extension.js")
        var major = 0
        if fm.isExecutableFile(atPath: "/usr/bin/gnome-shell") {
            let v = try await run("/usr/bin/gnome-shell", ["--version"])  // "GNOME Shell 43.9"
            major = Int(v.stdout.split(separator: " ").last?.split(separator: ".").first ?? "") ?? 0
        }
        #expect(entry == (major > 0 && major < 45 ? "extension-43.js" : "extension-45.js"), "\(entry), GNOME Shell \(major)")
        // The launcher and D-Bus start the agent where it was put; the entries are valid.
        let service = try String(contentsOfFile: "\(home)/usr/share/dbus-1/services/org.handoff.Session.service", encoding: .utf8)
        #expect(service.contains("Exec=\(home)/usr/bin/handoff-session\n") && service.contains("SystemdService=handoff-session.service"), "\(service)")
        let launcher = "\(home)/usr/share/applications/org.handoff.Handoff.desktop"
        #expect(try String(contentsOfFile: launcher, encoding: .utf8).contains("Exec=\(home)/usr/bin/handoff-session --activate"))
        for entry in [launcher, "\(home)/usr/share/krunner/dbusplugins/org.handoff.Handoff.desktop"] {
            let valid = try await run("/usr/bin/desktop-file-validate", [entry])
            #expect(valid.status == 0 && !valid.stdout.contains("error"), "\(entry): \(valid)")
        }
        // The shell integration, sourced as a startup file would: the prompt hook is there.
        for (shell, check) in [("bash", "declare -F __handoff_terminal"), ("zsh", "(( ${precmd_functions[(I)__handoff_terminal]} ))"),
                               ("fish", "functions -q __handoff_terminal")] {
            let file = "\(home)/usr/share/handoff/shell/handoff.\(shell)"
            let sourced = try await run("/usr/bin/\(shell)", ["-c", "source \(file) && \(check)"],
                                        environment: ["PATH": "/usr/bin:/bin", "HOME": home, "HANDOFF_SOCKET": home + "/none"])
            #expect(sourced.status == 0, "\(shell): \(sourced)")
        }
        // The units start the binaries where they were put.
        let unit = try String(contentsOfFile: "\(home)/config/systemd/user/handoffd.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(home)/usr/bin/handoffd"), "\(unit)")
        let bad = try await run("/bin/bash", [TestEnvironment.packageRoot + "/scripts/install", "--frm", "x"], environment: env)
        #expect(bad.status == 2 && bad.stderr.contains("unknown argument"), "\(bad)")
    }

    @Test func bashCompletesCommandsAndTheirOptions() async throws {
        let ctl = try TestEnvironment.binary("handoffctl")
        let dir = try TestEnvironment.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = try await run(ctl, ["--generate-completion-script", "bash"]).stdout
        try script.write(toFile: dir + "/handoffctl", atomically: true, encoding: .utf8)
        func complete(_ words: [String]) async throws -> [String] {
            let line = words.joined(separator: " ")
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            let r = try await run("/bin/bash", ["-c", """
                source \(dir)/handoffctl
                COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
                _handoffctl handoffctl '\(words.last!)' '\(words.count > 1 ? words[words.count - 2] : "")'
                printf '%s\\n' "${COMPREPLY[@]}"
                """])
            #expect(r.status == 0, "\(r)")
            return r.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try await complete(["handoffctl", "con"]) == ["continue"])
        let all = try await complete(["handoffctl", ""])
        for c in Self.subcommands { #expect(all.contains(c), "\(c) in \(all)") }
        let options = try await complete(["handoffctl", "continue", "--"])
        for o in ["--from", "--type", "--open", "--socket", "--json"] { #expect(options.contains(o), "\(o) in \(options)") }
    }

    @Test func zshAndFishLoadTheirCompletions() async throws {
        let ctl = try TestEnvironment.binary("handoffctl")
        let dir = try TestEnvironment.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for shell in ["zsh", "fish"] {
            let script = try await run(ctl, ["--generate-completion-script", shell]).stdout
            try script.write(toFile: "\(dir)/c.\(shell)", atomically: true, encoding: .utf8)
            let check = try await run("/usr/bin/\(shell)", ["-n", "\(dir)/c.\(shell)"])
            #expect(check.status == 0, "\(shell): \(check)")
            for c in Self.subcommands { #expect(script.contains(c), "\(shell) completes \(c)") }
        }
        let fish = try await run("/usr/bin/fish", ["-c", "source \(dir)/c.fish; complete -C 'handoffctl con'"])
        #expect(fish.stdout.hasPrefix("continue"), "\(fish)")
    }

    @Test(arguments: ["handoffctl", "handoffd", "handoff-session"])
    func theManPageIsCurrentAndRenders(_ program: String) async throws {
        let binary = try TestEnvironment.binary(program)
        let generator = try TestEnvironment.binary("generate-manual")
        let fresh = try await run(generator, [binary, "-o", "-"])
        #expect(fresh.status == 0, "\(fresh)")
        let page = TestEnvironment.packageRoot + "/Docs/man/\(program).1"
        let committed = try String(contentsOfFile: page, encoding: .utf8)
        func body(_ page: String) -> [Substring] { page.split(separator: "\n").filter { !$0.hasPrefix(".Dd ") } }
        #expect(body(fresh.stdout) == body(committed), "Docs/man/\(program).1 is stale: run scripts/dev/man")
        // Nothing of the machine that generated it (a home directory) gets into the page.
        #expect(!committed.contains("/root/") && !committed.contains("/home/"), "Docs/man/\(program).1 names a home directory")
        let rendered = try await run("/usr/bin/man", ["-l", page],
                                     environment: ["PATH": "/usr/bin:/bin", "MANPAGER": "cat", "MANWIDTH": "100", "LANG": "C.UTF-8"])
        #expect(rendered.status == 0, "\(rendered)")
        #expect(rendered.stdout.contains("--help"))
        if program == "handoffctl" {
            for c in Self.subcommands { #expect(rendered.stdout.contains(c), "the man page documents \(c)") }
            #expect(rendered.stdout.contains("--socket"))
        }
    }
}
