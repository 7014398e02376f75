import HandoffCore
import HandoffSystem
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Everything handoffd is told at start: defaults, then the config file, then flags.
public struct DaemonConfiguration: Sendable {
    public var deviceName: String
    public var stateDirectory: String
    public var socketPath: String
    public var logLevel: Logger.Level = .info
    public var maximumActivityBytes = ActivityLimits.defaultMaximumEncodedBytes
    public var willSaveTimeoutMilliseconds: Int64 = 500
    /// Activities made without an owning session expire after this unless they say
    /// otherwise (`unowned-expiry-minutes`; 0: never).
    public var unownedExpiryMinutes: Int64 = 720
    /// What terminal activities name as the host to ssh to (nil: the host name).
    public var sshHost: String?
    /// How terminals continued here connect (`terminal-transport`).
    public var terminalTransport = TerminalContinuation.Transport.ssh
    /// Whether a terminal in a folder synced here too opens locally (`terminal-synced-local`).
    public var terminalSyncedLocal = true
    /// How long the activity history keeps what it saw (`history-days`; 0: no history).
    public var historyDays: Int64 = 30
    /// The history helper (`handoff-history`) ends after this many seconds without a
    /// request (`history-helper-idle-seconds`, 1 to 86400).
    public var historyHelperIdleSeconds: Int64 = 60
    public var maximumConnections = 64
    public var requestTimeoutMilliseconds: Int64 = 10_000
    public var idleTimeoutMilliseconds: Int64 = 60_000
    /// Where peers connect: every address by default.
    public var peerListenAddress = "::"
    /// 0: any free port, advertised over mDNS.
    public var peerPort = 0
    /// Advertise and browse with Avahi.
    public var discovery = true
    /// A peer must finish the TLS handshake and the hello within this.
    public var peerHandshakeTimeoutMilliseconds: Int64 = 5_000
    /// Peer connections that have not said hello yet, in all and from one address.
    public var peerMaximumUnauthenticated = PeerServiceSettings().maximumUnauthenticated
    public var peerMaximumUnauthenticatedPerAddress = PeerServiceSettings().maximumUnauthenticatedPerAddress
    /// An app asked for a continuation stream must take it (or refuse it) within this.
    public var streamAcceptTimeoutMilliseconds: Int64 = 10_000
    /// Continuation streams one peer may have open with this device at once, each way.
    public var maximumStreamsPerPeer = 8
    /// The clipboard across the account (PeerServiceSettings says what each is).
    public var clipboard = true
    public var clipboardLifetimeSeconds: Int64 = 600
    public var clipboardMaximumFormatBytes: Int64 = 64 << 20
    public var clipboardMaximumHeldBytes = 16 << 20
    /// Folders synced by other means than Syncthing or Nextcloud: a name the same on every
    /// device, and the folder's path here (`synced-root = NAME=PATH`, repeatable).
    public var syncedRoots: [(name: String, path: String)] = []
    /// Peers dialled at these addresses whatever mDNS says (`peer = HOST:PORT`,
    /// repeatable): across VPNs and routed networks, where multicast does not reach.
    public var staticPeers: [String] = []
    /// Unicast DNS domains to browse for peers besides mDNS (`dns-sd-domain = DOMAIN`,
    /// repeatable), through Avahi's wide-area support; records are kept by the domain's
    /// administrator (PeerProtocol.md §3.4).
    public var dnsSDDomains: [String] = []
    /// Seconds between changes of the advertisement's random name and tag (at least 10).
    public var advertisementRotationSeconds: Int64 = 900

    public init() {
        deviceName = DaemonConfiguration.hostName()
        stateDirectory = DefaultPaths.stateDirectory
        socketPath = DefaultPaths.socket
    }

    static func hostName() -> String { HostName.current ?? "workstation" }

    /// Letters, digits and hyphens in dot-separated labels of 1–63 bytes, 253 in all.
    static func isDomainName(_ s: String) -> Bool {
        let labels = s.split(separator: ".", omittingEmptySubsequences: false)
        return !s.isEmpty && s.utf8.count <= 253 && labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "-" || $0 == "_" }
        }
    }

    public struct FileError: Error, Sendable, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Applies `key = value` lines (`#` starts a comment). Keys are the long flag names.
    public mutating func apply(configFile text: String, path: String) throws {
        for (n, raw) in text.textLines.enumerated() {
            let line = raw.prefix { $0 != "#" }.trimmingCharacters()
            guard !line.isEmpty else { continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw FileError(description: "\(path):\(n + 1): expected `key = value`, got \"\(line)\"")
            }
            let key = line[..<eq].trimmingCharacters()
            let value = line[line.index(after: eq)...].trimmingCharacters()
            do { try set(key, value) } catch {
                throw FileError(description: "\(path):\(n + 1): \(error.description)")
            }
        }
    }

    /// One setting (`DaemonOption`), from the config file or a flag.
    public mutating func set(_ key: String, _ value: String) throws(FileError) {
        guard let option = DaemonOption.named(key) else { throw FileError(description: "unknown setting \"\(key)\"") }
        try option.apply(&self, value)
    }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }
}
