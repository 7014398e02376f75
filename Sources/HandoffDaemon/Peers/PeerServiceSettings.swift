import HandoffCore
import NIOCore

/// Limits and timings of the peer side.
public struct PeerServiceSettings: Sendable {
    /// Where the peer listener binds ("::" = every address, IPv4 too).
    public var listenAddress = "::"
    /// 0: any free port (the advertisement says which).
    public var port = 0
    /// Advertise and browse with Avahi.
    public var discovery = true
    /// How often the advertisement's random name and tag change (15 minutes; shorter in tests).
    public var advertisementRotationSeconds: Int64 = PrivateAdvertisement.epochSeconds
    /// HOST:PORT of peers to dial whatever mDNS says (`peer =` in handoffd.conf).
    public var staticPeers: [String] = []
    /// Unicast DNS-SD domains browsed besides `local` (`dns-sd-domain =`).
    public var dnsSDDomains: [String] = []
    /// Backoff ceiling for static peers (no mDNS says when one is back, so they are
    /// tried on a timer alone).
    public var maximumStaticBackoff: TimeAmount = .seconds(30)
    /// Before the hello a connection holds a stranger's slot: keep that short. TLS 1.3
    /// takes one round trip, milliseconds on a LAN.
    public var handshakeTimeout: TimeAmount = .seconds(3)
    public var helloTimeout: TimeAmount = .seconds(2)
    public var fetchTimeout: TimeAmount = .seconds(5)
    public var connectTimeout: TimeAmount = .seconds(5)
    /// Connections that have not said hello yet: in all, and from one address. When all
    /// are taken, a newcomer from an address holding fewer takes the busiest one's oldest.
    public var maximumUnauthenticated = 32
    public var maximumUnauthenticatedPerAddress = 8
    /// Connections in all, authenticated or not (dialled ones are not counted).
    public var maximumConnections = 64
    /// TLS handshakes one address may start: a burst, then so many per second.
    public var handshakeBurstPerAddress = 32
    public var handshakesPerSecondPerAddress = 8
    /// The same for an address a trusted peer authenticated from in the last 10 minutes:
    /// each continuation stream it opens is a handshake.
    public var handshakeBurstPerKnownAddress = 128
    public var handshakesPerSecondPerKnownAddress = 64
    /// Frames larger than this are a protocol error (the activity cap plus room).
    public var maximumFrameBytes = 1 << 20
    /// An untrusted device is dialled again no sooner than this.
    public var untrustedRetry: TimeAmount = .minutes(5)
    /// Backoff for a trusted device that could not be reached: doubles up to the maximum,
    /// kept short so a peer whose network comes back is found again within seconds (it is
    /// dialled only while mDNS still lists it).
    public var minimumBackoff: TimeAmount = .milliseconds(500)
    public var maximumBackoff: TimeAmount = .seconds(4)
    /// Continuation streams with one peer at once, each way (they count against the
    /// connection caps too).
    public var maximumStreamsPerPeer = 8
    /// How terminals continued here connect, and whether a synced folder opens locally.
    public var terminalTransport = TerminalContinuation.Transport.ssh
    public var terminalSyncedLocal = true
    /// `synced-root` lines, beside what Syncthing and Nextcloud record.
    public var configuredRoots: [(name: String, path: String)] = []

    public init() {}

    /// As the configuration says (the handshake's deadline split two to one between TLS
    /// and the hello; frames room for an activity at the cap, twice, and its envelope).
    init(_ config: DaemonConfiguration) {
        listenAddress = config.peerListenAddress
        port = config.peerPort
        staticPeers = config.staticPeers
        dnsSDDomains = config.dnsSDDomains
        advertisementRotationSeconds = config.advertisementRotationSeconds
        discovery = config.discovery
        handshakeTimeout = .milliseconds(config.peerHandshakeTimeoutMilliseconds * 2 / 3)
        helloTimeout = .milliseconds(config.peerHandshakeTimeoutMilliseconds / 3)
        maximumFrameBytes = max(1 << 20, config.maximumActivityBytes * 2 + 4096)
        maximumStreamsPerPeer = config.maximumStreamsPerPeer
        terminalTransport = config.terminalTransport
        terminalSyncedLocal = config.terminalSyncedLocal
        configuredRoots = config.syncedRoots
        maximumUnauthenticated = config.peerMaximumUnauthenticated
        maximumUnauthenticatedPerAddress = config.peerMaximumUnauthenticatedPerAddress
    }

    var admissionLimits: PeerAdmission.Limits {
        PeerAdmission.Limits(perSource: maximumUnauthenticatedPerAddress, unauthenticated: maximumUnauthenticated,
                             total: maximumConnections, burst: handshakeBurstPerAddress, perSecond: handshakesPerSecondPerAddress,
                             goodBurst: handshakeBurstPerKnownAddress, goodPerSecond: handshakesPerSecondPerKnownAddress)
    }
}
