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

    static func hostName() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count) == 0 else { return "workstation" }
        let name = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "workstation" : name
    }

    /// Letters, digits and hyphens in dot-separated labels of 1–63 bytes, 253 in all.
    static func isDomainName(_ s: String) -> Bool {
        let labels = s.split(separator: ".", omittingEmptySubsequences: false)
        return !s.isEmpty && s.utf8.count <= 253 && labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "-" || $0 == "_" }
        }
    }

    public struct FileError: Error, CustomStringConvertible {
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
            do { try set(key, value) } catch let e as FileError {
                throw FileError(description: "\(path):\(n + 1): \(e.description)")
            }
        }
    }

    public mutating func set(_ key: String, _ value: String) throws {
        func int(_ v: String) throws -> Int {
            guard let i = Int(v), i > 0 else { throw FileError(description: "\(key) must be a positive whole number, not \"\(v)\"") }
            return i
        }
        switch key {
        case "name": deviceName = value
        case "state-dir": stateDirectory = value
        case "socket": socketPath = value
        case "log-level":
            guard let l = Logger.Level(rawValue: value) else {
                throw FileError(description: "log-level must be one of trace, debug, info, notice, warning, error, critical")
            }
            logLevel = l
        case "max-activity-bytes": maximumActivityBytes = try int(value)
        case "will-save-timeout-ms": willSaveTimeoutMilliseconds = Int64(try int(value))
        case "history-days":
            guard let n = Int64(value), (0...3650).contains(n) else { throw FileError(description: "history-days must be 0 (no history) to 3650, not \"\(value)\"") }
            historyDays = n
        case "history-helper-idle-seconds":
            guard let n = Int64(value), (1...86_400).contains(n) else {
                throw FileError(description: "history-helper-idle-seconds must be 1 to 86400, not \"\(value)\"")
            }
            historyHelperIdleSeconds = n
        case "unowned-expiry-minutes":
            guard let n = Int64(value), n >= 0 else { throw FileError(description: "unowned-expiry-minutes must be 0 (never) or a number of minutes, not \"\(value)\"") }
            unownedExpiryMinutes = n
        case "max-connections": maximumConnections = try int(value)
        case "request-timeout-ms": requestTimeoutMilliseconds = Int64(try int(value))
        case "idle-timeout-ms": idleTimeoutMilliseconds = Int64(try int(value))
        case "peer-listen": peerListenAddress = value
        case "peer-port":
            guard let p = Int(value), (0...65535).contains(p) else { throw FileError(description: "peer-port must be 0 to 65535, not \"\(value)\"") }
            peerPort = p
        case "peer-handshake-timeout-ms": peerHandshakeTimeoutMilliseconds = Int64(try int(value))
        case "peer-max-unauthenticated": peerMaximumUnauthenticated = try int(value)
        case "peer-max-unauthenticated-per-address": peerMaximumUnauthenticatedPerAddress = try int(value)
        case "stream-accept-timeout-ms": streamAcceptTimeoutMilliseconds = Int64(try int(value))
        case "max-streams-per-peer": maximumStreamsPerPeer = try int(value)
        case "synced-root":
            guard let eq = value.firstIndex(of: "="), case let name = value[..<eq].trimmingCharacters(), !name.isEmpty,
                  case let path = value[value.index(after: eq)...].trimmingCharacters(), path.hasPrefix("/") else {
                throw FileError(description: "synced-root must be NAME=/absolute/path, not \"\(value)\"")
            }
            syncedRoots.append((name, path))
        case "advertisement-rotation-seconds":
            guard let n = Int64(value), n >= 10 else { throw FileError(description: "advertisement-rotation-seconds must be 10 or more") }
            advertisementRotationSeconds = n
        case "peer":
            guard (try? PeerService.hostAndPort(value)) != nil else {
                throw FileError(description: "peer must be HOST:PORT (or [IPv6]:PORT), not \"\(value)\"")
            }
            staticPeers.append(value)
        case "dns-sd-domain":
            let domain = value.hasSuffix(".") ? String(value.dropLast()) : value
            guard DaemonConfiguration.isDomainName(domain), domain.lowercased() != "local" else {
                throw FileError(description: "dns-sd-domain must be a DNS domain such as corp.example (not local), not \"\(value)\"")
            }
            if !dnsSDDomains.contains(domain) { dnsSDDomains.append(domain) }
        case "discovery":
            guard value == "yes" || value == "no" else { throw FileError(description: "discovery must be yes or no") }
            discovery = value == "yes"
        default: throw FileError(description: "unknown setting \"\(key)\"")
        }
    }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }
}
