import HandoffCore
import Logging

/// One setting of handoffd. Its name is both the long flag (`--max-connections 32`) and the
/// config file's key (`max-connections = 32`); the one table, `DaemonOption.all`, gives the
/// flags, the config file and `handoffd --help` (and so the man page).
public struct DaemonOption: Sendable {
    public let name: String
    /// What `--help` calls the value (`n`, `path`, `host:port`).
    public let valueName: String
    /// The default as `--help` says it.
    public let defaultText: String?
    public let help: String
    /// May be given more than once; each adds one.
    public let repeatable: Bool
    /// Left out of `--help` (for tests and benchmarks).
    public let hidden: Bool
    /// A flag without a value that stands for this setting with a given value
    /// (`--no-discovery` is `discovery = no`).
    public let shorthand: (flag: String, value: String, help: String)?
    let apply: @Sendable (inout DaemonConfiguration, String) throws(DaemonConfiguration.FileError) -> Void

    init(_ name: String, _ valueName: String, default defaultText: String?, _ help: String, repeatable: Bool = false, hidden: Bool = false,
         shorthand: (flag: String, value: String, help: String)? = nil,
         apply: @escaping @Sendable (inout DaemonConfiguration, String) throws(DaemonConfiguration.FileError) -> Void) {
        self.name = name
        self.valueName = valueName
        self.defaultText = defaultText
        self.help = help
        self.repeatable = repeatable
        self.hidden = hidden
        self.shorthand = shorthand
        self.apply = apply
    }

    /// A setting whose default is `DaemonConfiguration`'s own: `--help` reads it there, so
    /// the value is written once (yes or no for a switch, the raw value of a choice).
    init<Value>(_ name: String, _ valueName: String, default field: KeyPath<DaemonConfiguration, Value>, _ help: String, repeatable: Bool = false,
                hidden: Bool = false, shorthand: (flag: String, value: String, help: String)? = nil,
                apply: @escaping @Sendable (inout DaemonConfiguration, String) throws(DaemonConfiguration.FileError) -> Void) {
        self.init(name, valueName, default: Self.shown(Self.defaults[keyPath: field]), help, repeatable: repeatable, hidden: hidden,
                  shorthand: shorthand, apply: apply)
    }

    private static let defaults = DaemonConfiguration()

    static func shown(_ value: Any) -> String {
        switch value {
        case let yes as Bool: yes ? "yes" : "no"
        case let choice as any RawRepresentable: "\(choice.rawValue)"
        default: "\(value)"
        }
    }

    public static func named(_ name: String) -> DaemonOption? { all.first { $0.name == name } }

    /// Every setting, in the order `--help` lists them.
    public static let all: [DaemonOption] = [
        .init("name", "name", default: "the host name", "This device's name, as other workstations show it.") { c, v in c.deviceName = v },
        .init("ssh-host", "host", default: "the host name", "The host your other workstations ssh to when they continue a terminal here.") { c, v throws(DaemonConfiguration.FileError) in
            guard TerminalSession.isHost(v) else { throw .init(description: "ssh-host must be a host name or an IP address") }
            c.sshHost = v
        },
        .init("terminal-transport", "ssh|mosh", default: \.terminalTransport,
              "How a terminal continued here reaches its workstation; mosh is used when installed here (and on the other side).") {
            c, v throws(DaemonConfiguration.FileError) in
            guard let t = TerminalContinuation.Transport(rawValue: v) else { throw .init(description: "terminal-transport must be ssh or mosh") }
            c.terminalTransport = t
        },
        .init("terminal-synced-local", "yes|no", default: \.terminalSyncedLocal,
              "A terminal continued here from a folder this workstation syncs too opens locally in its copy (unless it ran in tmux).") {
            c, v throws(DaemonConfiguration.FileError) in
            guard v == "yes" || v == "no" else { throw .init(description: "terminal-synced-local must be yes or no") }
            c.terminalSyncedLocal = v == "yes"
        },
        .init("state-dir", "path", default: "$XDG_STATE_HOME/handoff", "Where durable state lives.") { c, v in c.stateDirectory = v },
        .init("socket", "path", default: "$XDG_RUNTIME_DIR/handoff/handoffd.sock", "The control socket's path.") { c, v in c.socketPath = v },
        .init("log-level", "level", default: \.logLevel, "trace, debug, info, notice, warning, error or critical.") { c, v throws(DaemonConfiguration.FileError) in
            guard let l = Logger.Level(rawValue: v) else {
                throw .init(description: "log-level must be one of trace, debug, info, notice, warning, error, critical")
            }
            c.logLevel = l
        },
        .init("max-activity-bytes", "n", default: \.maximumActivityBytes, "Cap on an encoded activity.") { c, v throws(DaemonConfiguration.FileError) in
            c.maximumActivityBytes = try positive("max-activity-bytes", v, upTo: 16_777_216)
        },
        .init("history-days", "n", default: \.historyDays, "How many days the searchable activity history keeps what it saw; 0 keeps none.") { c, v throws(DaemonConfiguration.FileError) in
            c.historyDays = try Int64(within("history-days", v, 0...3650, "0 (no history) to 3650"))
        },
        .init("history-helper-idle-seconds", "n", default: \.historyHelperIdleSeconds, "The history helper (handoff-history) ends after this many seconds without a request.",
              hidden: true) { c, v throws(DaemonConfiguration.FileError) in
            c.historyHelperIdleSeconds = try Int64(within("history-helper-idle-seconds", v, 1...86_400, "1 to 86400"))
        },
        .init("unowned-expiry-minutes", "n", default: \.unownedExpiryMinutes,
              "Activities made without an owning session (handoffctl become-current without --attach, scripts) expire after this unless they set their own expiry; 0: never.") {
            c, v throws(DaemonConfiguration.FileError) in
            c.unownedExpiryMinutes = try Int64(within("unowned-expiry-minutes", v, 0...5_256_000, "0 (never) or a number of minutes up to 5256000 (ten years)"))
        },
        .init("will-save-timeout-ms", "n", default: \.willSaveTimeoutMilliseconds, "How long a fresh snapshot waits for the owner's save.") { c, v throws(DaemonConfiguration.FileError) in
            c.willSaveTimeoutMilliseconds = Int64(try positive("will-save-timeout-ms", v, upTo: 60_000))
        },
        .init("max-connections", "n", default: \.maximumConnections, "Open control connections at once.") { c, v throws(DaemonConfiguration.FileError) in
            c.maximumConnections = try positive("max-connections", v, upTo: 65_536)
        },
        .init("request-timeout-ms", "n", default: \.requestTimeoutMilliseconds, "A control request must arrive whole within this.") { c, v throws(DaemonConfiguration.FileError) in
            c.requestTimeoutMilliseconds = Int64(try positive("request-timeout-ms", v, upTo: 86_400_000))
        },
        .init("idle-timeout-ms", "n", default: \.idleTimeoutMilliseconds, "Idle control connections are closed after this.") { c, v throws(DaemonConfiguration.FileError) in
            c.idleTimeoutMilliseconds = Int64(try positive("idle-timeout-ms", v, upTo: 86_400_000))
        },
        .init("peer-listen", "address", default: ":: = every address", "The address peers connect to.") { c, v in c.peerListenAddress = v },
        .init("peer-port", "port", default: \.peerPort, "The peer port; 0 picks a free one, advertised over mDNS.") { c, v throws(DaemonConfiguration.FileError) in
            c.peerPort = try within("peer-port", v, 0...65535, "0 to 65535")
        },
        .init("peer-handshake-timeout-ms", "n", default: \.peerHandshakeTimeoutMilliseconds, "A peer must finish TLS and the hello within this.") { c, v throws(DaemonConfiguration.FileError) in
            c.peerHandshakeTimeoutMilliseconds = Int64(try positive("peer-handshake-timeout-ms", v, upTo: 600_000))
        },
        .init("peer-max-unauthenticated", "n", default: \.peerMaximumUnauthenticated, "Peer connections that have not said hello yet, in all.") { c, v throws(DaemonConfiguration.FileError) in
            c.peerMaximumUnauthenticated = try positive("peer-max-unauthenticated", v, upTo: 65_536)
        },
        .init("peer-max-unauthenticated-per-address", "n", default: \.peerMaximumUnauthenticatedPerAddress, "Peer connections not past the hello from one address.") {
            c, v throws(DaemonConfiguration.FileError) in
            c.peerMaximumUnauthenticatedPerAddress = try positive("peer-max-unauthenticated-per-address", v, upTo: 65_536)
        },
        .init("stream-accept-timeout-ms", "n", default: \.streamAcceptTimeoutMilliseconds, "An app asked for a continuation stream must take it within this.") {
            c, v throws(DaemonConfiguration.FileError) in
            c.streamAcceptTimeoutMilliseconds = Int64(try positive("stream-accept-timeout-ms", v, upTo: 86_400_000))
        },
        .init("max-streams-per-peer", "n", default: \.maximumStreamsPerPeer, "Continuation streams open with one peer at once, each way.") { c, v throws(DaemonConfiguration.FileError) in
            c.maximumStreamsPerPeer = try positive("max-streams-per-peer", v, upTo: 1024)
        },
        .init("clipboard", "yes|no", default: \.clipboard, "Announce copies to your other workstations, and paste theirs (bytes move only when pasted).",
              shorthand: ("no-clipboard", "no", "Neither announce copies nor take other workstations'.")) { c, v throws(DaemonConfiguration.FileError) in
            guard v == "yes" || v == "no" else { throw .init(description: "clipboard must be yes or no") }
            c.clipboard = v == "yes"
        },
        .init("clipboard-seconds", "n", default: \.clipboardLifetimeSeconds, "How long a copy can be pasted on another workstation.") { c, v throws(DaemonConfiguration.FileError) in
            c.clipboardLifetimeSeconds = Int64(try positive("clipboard-seconds", v, upTo: 86_400))
        },
        .init("clipboard-max-bytes", "n", default: \.clipboardMaximumFormatBytes, "The largest format of a copy announced or taken (64 MiB).") { c, v throws(DaemonConfiguration.FileError) in
            c.clipboardMaximumFormatBytes = Int64(try positive("clipboard-max-bytes", v, upTo: 1 << 40))
        },
        .init("clipboard-held-max-bytes", "n", default: \.clipboardMaximumHeldBytes, "The most handoffd keeps in memory for handoffctl copy (16 MiB).") {
            c, v throws(DaemonConfiguration.FileError) in
            c.clipboardMaximumHeldBytes = try positive("clipboard-held-max-bytes", v, upTo: 1 << 30)
        },
        .init("peer", "host:port", default: nil, "A peer to dial at HOST:PORT whatever mDNS says.", repeatable: true) { c, v throws(DaemonConfiguration.FileError) in
            guard (try? PeerService.hostAndPort(v)) != nil else {
                throw .init(description: "peer must be HOST:PORT (or [IPv6]:PORT), not \"\(v)\"")
            }
            c.staticPeers.append(v)
        },
        .init("dns-sd-domain", "domain", default: nil, "Also look for peers in this unicast DNS-SD domain, through Avahi's wide-area support.", repeatable: true) {
            c, v throws(DaemonConfiguration.FileError) in
            let domain = v.hasSuffix(".") ? String(v.dropLast()) : v
            guard DaemonConfiguration.isDomainName(domain), domain.lowercased() != "local" else {
                throw .init(description: "dns-sd-domain must be a DNS domain such as corp.example (not local), not \"\(v)\"")
            }
            if !c.dnsSDDomains.contains(domain) { c.dnsSDDomains.append(domain) }
        },
        .init("synced-root", "name=path", default: nil,
              "A folder synced by other means than Syncthing or Nextcloud: a name the same on every device, and its path here.", repeatable: true) {
            c, v throws(DaemonConfiguration.FileError) in
            guard let eq = v.firstIndex(of: "="), case let name = v[..<eq].trimmingCharacters(), !name.isEmpty,
                  case let path = v[v.index(after: eq)...].trimmingCharacters(), path.hasPrefix("/") else {
                throw .init(description: "synced-root must be NAME=/absolute/path, not \"\(v)\"")
            }
            c.syncedRoots.append((name, path))
        },
        .init("advertisement-rotation-seconds", "n", default: \.advertisementRotationSeconds, "Seconds between new random advertisement names.", hidden: true) {
            c, v throws(DaemonConfiguration.FileError) in
            c.advertisementRotationSeconds = Int64(try within("advertisement-rotation-seconds", v, 10...31_536_000, "10 to 31536000 (a year)"))
        },
        .init("discovery", "yes|no", default: \.discovery, "Advertise and browse with Avahi.",
              shorthand: ("no-discovery", "no", "Do not advertise or browse with Avahi.")) { c, v throws(DaemonConfiguration.FileError) in
            guard v == "yes" || v == "no" else { throw .init(description: "discovery must be yes or no") }
            c.discovery = v == "yes"
        },
    ]

    /// Every number has a ceiling: times and counts far beyond any use would overflow the
    /// conversions to nanoseconds, and a typo should be an error, not a crash.
    private static func positive(_ name: String, _ v: String, upTo ceiling: Int) throws(DaemonConfiguration.FileError) -> Int {
        guard let i = Int(v), (1...ceiling).contains(i) else {
            throw .init(description: "\(name) must be a whole number from 1 to \(ceiling), not \"\(v)\"")
        }
        return i
    }

    private static func within(_ name: String, _ v: String, _ range: ClosedRange<Int>, _ what: String) throws(DaemonConfiguration.FileError) -> Int {
        guard let i = Int(v), range.contains(i) else { throw .init(description: "\(name) must be \(what), not \"\(v)\"") }
        return i
    }
}
