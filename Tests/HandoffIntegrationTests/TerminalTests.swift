import Foundation
import HandoffCore
import Testing

/// `handoff.terminal` between two workstations without a desktop: `offer-terminal` on a,
/// `continue` on b prints the ssh command (every word quoted), a's handoffd names its
/// host (`ssh-host`), and fields that could make a command do more are refused at both ends.
extension WorkstationTests {
@Suite struct TerminalTests {
    let across = AcrossWorkstationsTests()

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
                try await net.ctl("b", "continue").stdout.contains("'cd -- '\\''/home/ann/My Notes'\\'' && exec")
            }

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
}
}
