@testable import HandoffDaemon
import Testing

/// handoffd.conf settings that take more than a number: what is accepted and what is refused.
@Suite("Daemon configuration")
struct DaemonConfigurationTests {
    @Test func unicastDNSSDDomainsAreDomainNames() throws {
        var c = DaemonConfiguration()
        try c.apply(configFile: "dns-sd-domain = corp.example\ndns-sd-domain = Lab.Corp.Example.\ndns-sd-domain = corp.example\n", path: "t")
        #expect(c.dnsSDDomains == ["corp.example", "Lab.Corp.Example"], "a trailing dot is dropped and repeats are ignored")
        for bad in ["local", "LOCAL.", "", "a..b", "-x.example", "x y.example", "x/y", String(repeating: "a", count: 64) + ".example"] {
            var d = DaemonConfiguration()
            #expect(throws: DaemonConfiguration.FileError.self, "\(bad)") { try d.set("dns-sd-domain", bad) }
        }
    }

    @Test func staticPeersNeedAPort() throws {
        var c = DaemonConfiguration()
        try c.set("peer", "desk.example:7443")
        try c.set("peer", "[fd00::2]:7443")
        #expect(c.staticPeers == ["desk.example:7443", "[fd00::2]:7443"])
        #expect(throws: DaemonConfiguration.FileError.self) { try c.set("peer", "desk.example") }
    }

    @Test func terminalSettings() throws {
        var c = DaemonConfiguration()
        #expect(c.terminalTransport == .ssh && c.terminalSyncedLocal)
        try c.apply(configFile: "terminal-transport = mosh\nterminal-synced-local = no\n", path: "t")
        #expect(c.terminalTransport == .mosh && !c.terminalSyncedLocal)
        #expect(throws: DaemonConfiguration.FileError.self) { try c.set("terminal-transport", "telnet") }
        #expect(throws: DaemonConfiguration.FileError.self) { try c.set("terminal-synced-local", "maybe") }
    }

    @Test func crlfLineEndsAreLineEnds() throws {
        var c = DaemonConfiguration()
        try c.apply(configFile: "name = desk\r\ndns-sd-domain = corp.example\r\n", path: "t")
        #expect(c.deviceName == "desk" && c.dnsSDDomains == ["corp.example"])
    }

    /// One table gives the config file, the flags and --help: a setting in one is in all.
    @Test func flagsConfigFileAndHelpComeFromOneTable() throws {
        let names = DaemonOption.all.map(\.name)
        #expect(Set(names).count == names.count, "no setting twice")
        let help = DaemonCommandLine.help()
        for o in DaemonOption.all {
            #expect(help.contains("--\(o.name) <\(o.valueName)>") == !o.hidden, "\(o.name) in --help unless hidden")
        }
        let words = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")  // as wrapped for 80 columns
        #expect(help.contains("--no-discovery") && help.contains("--config <path>") && words.contains("Open control connections at once. (default: 64)"))
        #expect(help.split(separator: "\n").allSatisfy { $0.count <= 80 }, "lines fit 80 columns")
        let parsed = try DaemonCommandLine.parse(["--name", "desk", "--max-connections=32", "--no-discovery", "--peer", "a.example:1", "--peer", "b.example:2",
                                                  "--config", "/etc/h.conf", "--history-helper-idle-seconds", "5"])
        #expect(parsed.request == .run && parsed.configFile == "/etc/h.conf")
        var fromFlags = DaemonConfiguration()
        for s in parsed.settings { try fromFlags.set(s.name, s.value) }
        var fromFile = DaemonConfiguration()
        try fromFile.apply(configFile: "name = desk\nmax-connections = 32\ndiscovery = no\npeer = a.example:1\npeer = b.example:2\nhistory-helper-idle-seconds = 5\n", path: "t")
        for c in [fromFlags, fromFile] {
            #expect(c.deviceName == "desk" && c.maximumConnections == 32 && !c.discovery && c.staticPeers == ["a.example:1", "b.example:2"]
                    && c.historyHelperIdleSeconds == 5)
        }
    }

    @Test func badCommandLinesSayWhatIsWrong() {
        let cases: [([String], String)] = [
            (["--colour", "red"], "unknown option --colour (handoffd --help lists them)"),
            (["--name"], "--name needs a value"),
            (["desk"], "unexpected argument \"desk\": handoffd takes only options (handoffd --help lists them)"),
            (["--no-discovery=yes"], "--no-discovery takes no value"),
            (["--name", "--help"], "--name needs a value"),
            (["--state-dir", "--no-discovery"], "--state-dir needs a value"),
        ]
        for (arguments, message) in cases {
            #expect(throws: DaemonCommandLine.UsageError.self, "\(arguments)") { try DaemonCommandLine.parse(arguments) }
            do { _ = try DaemonCommandLine.parse(arguments) } catch { #expect(error.description == message) }
        }
        #expect((try? DaemonCommandLine.parse(["--max-connections", "0", "--help"]))?.request == .help)
        var c = DaemonConfiguration()
        #expect(throws: DaemonConfiguration.FileError.self) { try c.set("max-connections", "0") }
        #expect(throws: DaemonConfiguration.FileError.self) { try c.set("history-days", "3651") }
        #expect(throws: DaemonConfiguration.FileError.self) { try c.set("colour", "red") }
        // Numbers far beyond any use are refused, not left to overflow a conversion later.
        for (key, value) in [("unowned-expiry-minutes", "9223372036854775807"), ("request-timeout-ms", "99999999999"),
                             ("max-activity-bytes", "4294967296"), ("advertisement-rotation-seconds", "99999999999")] {
            #expect(throws: DaemonConfiguration.FileError.self, "\(key)") { try c.set(key, value) }
        }
        #expect((try? DaemonCommandLine.parse(["--name=--odd"]))?.settings.first?.value == "--odd", "said on purpose")
    }
}
