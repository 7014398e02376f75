import HandoffControlAPI
import HandoffCore
import HandoffPeerProtocol
import Logging
import NIOCore
import ServiceLifecycle

/// Continuation streams between daemons (Docs/PeerProtocol.md §11.3 and §19). Each stream
/// is its own TLS connection to the origin's peer port (same pinning, same caps), so bulk
/// data never delays the link's offers and fetches: hello with purpose `stream`,
/// `streamOpen` or `clipboardOpen`, then `streamAccepted` or an error, then stream frames
/// both ways. This service dials them for apps here (`continueStream`, `pasteClipboard`),
/// serves the ones peers open (`serve`), and keeps each peer's share (`StreamShares`).
/// The link layer tells it which link an activity's streams come from; it hears of links
/// (`LinkListener`) for the clipboard's pastes.
actor PeerStreamService: Service, LinkListener, CustomStringConvertible {
    /// How long the origin may take to say whether its owner took the stream, beyond the
    /// owner's own deadline there.
    static let streamAnswerMargin: TimeAmount = .seconds(5)
    /// A stream connection must say which activity it wants within this.
    static let streamOpenTimeout: TimeAmount = .seconds(10)

    nonisolated var description: String { "peer streams" }
    nonisolated let own: DeviceID
    nonisolated let deviceName: String
    nonisolated let trust: TrustStore
    nonisolated let registry: ActivityRegistry
    /// Where apps here take the streams peers ask of them.
    nonisolated let broker: StreamBroker
    nonisolated let clipboard: ClipboardService
    nonisolated let keeping: KeepingService
    nonisolated let dialer: PeerDialer
    nonisolated let logger: Logger
    nonisolated let maximumStreamsPerPeer: Int
    /// Where this side accepts connections (said in a stream's hello), once it listens.
    private(set) var listenPort = 0
    private var shares: StreamShares
    var links = LinkedPeers()

    init(own: DeviceID, deviceName: String, trust: TrustStore, registry: ActivityRegistry, broker: StreamBroker, clipboard: ClipboardService,
         keeping: KeepingService, dialer: PeerDialer, maximumStreamsPerPeer: Int, logger: Logger) {
        self.own = own
        self.deviceName = deviceName
        self.trust = trust
        self.registry = registry
        self.broker = broker
        self.clipboard = clipboard
        self.keeping = keeping
        self.dialer = dialer
        self.maximumStreamsPerPeer = maximumStreamsPerPeer
        self.logger = logger
        shares = StreamShares(maximumPerPeer: maximumStreamsPerPeer)
    }

    /// Streams end with their connections, which the link layer's stop and the stream
    /// broker's close.
    func run() async throws {
        try? await gracefulShutdown()
    }

    func listening(on port: Int) { listenPort = port }

    func linkUp(_ link: any LinkEnd) { links.up(link) }

    func linkDown(_ link: any LinkEnd) { links.down(link) }

    /// A stream to or from `peer` wants to open; false when the peer has its share open.
    func beginStream(_ peer: DeviceID, outgoing: Bool) -> Bool { shares.begin(peer, outgoing: outgoing) }

    func endStream(_ peer: DeviceID, outgoing: Bool) { shares.end(peer, outgoing: outgoing) }
}

/// The streams open with each peer, each way, against a share per peer: one peer cannot
/// take every connection, and an app here cannot open streams without end.
struct StreamShares: Sendable {
    let maximumPerPeer: Int
    private var counts: [DeviceID: (incoming: Int, outgoing: Int)] = [:]

    init(maximumPerPeer: Int) { self.maximumPerPeer = maximumPerPeer }

    /// False when the peer has its share open that way.
    mutating func begin(_ peer: DeviceID, outgoing: Bool) -> Bool {
        var c = counts[peer] ?? (0, 0)
        guard (outgoing ? c.outgoing : c.incoming) < maximumPerPeer else { return false }
        if outgoing { c.outgoing += 1 } else { c.incoming += 1 }
        counts[peer] = c
        return true
    }

    mutating func end(_ peer: DeviceID, outgoing: Bool) {
        guard var c = counts[peer] else { return }
        if outgoing { c.outgoing -= 1 } else { c.incoming -= 1 }
        counts[peer] = c.incoming <= 0 && c.outgoing <= 0 ? nil : c
    }

    /// Streams open with `peer` now, (incoming, outgoing).
    func open(with peer: DeviceID) -> (incoming: Int, outgoing: Int) { counts[peer] ?? (0, 0) }
}
