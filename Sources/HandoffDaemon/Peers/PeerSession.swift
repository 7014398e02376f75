import HandoffCore
import HandoffPeerProtocol

/// A connection's decisions once TLS is up (PeerProtocol.md §7 and §10.1), as pure
/// functions of what arrived: what the peer's first message makes of the connection, and
/// what each later message on a link asks of this device. `PeerService` performs the
/// result (sockets, the registry, the account); these are tested without either.
enum PeerSession {
    /// What the connection becomes after the peer's first message.
    enum Opening: Sendable, Equatable {
        /// Say why (an `error` message) and close.
        case refuse(code: String, message: String)
        /// Close without a word: the peer is not (or no longer) trusted.
        case close
        /// Run the pairing exchange (§16).
        case pair(PairingExchange.Role)
        /// A continuation stream connection (§11.3).
        case stream
        /// The long-lived link; `tuned`: its keepalive is tightened (both sides said link).
        case link(tuned: Bool)
    }

    /// `ours`: what this side said in its hello; `dialled`: this side connected.
    static func opening(first: PeerMessage, ours: PeerHello.Purpose, dialled: Bool, peerTrusted: Bool) -> Opening {
        guard case .hello(let hello) = first else {
            return .refuse(code: "expected-hello", message: "the first message must be a hello")
        }
        switch hello.compatibility(with: PeerHello(deviceName: "")) {
        case .peerTooOld:
            return .refuse(code: "version-too-old",
                           message: "this device speaks versions \(PeerHello.minimumVersion)-\(PeerHello.currentVersion); \(hello.version) is too old")
        case .peerTooNew:
            return .refuse(code: "version-unknown",
                           message: "this device speaks up to version \(PeerHello.currentVersion); the peer needs \(hello.minimumVersion) or later")
        case .compatible:
            break
        }
        // We dialled to pair, or a pairing connection came in: strangers get this far only
        // while a pairing window is open (the TLS verifier decides that).
        if ours == .pair { return .pair(.initiator) }
        if hello.purpose == .pair && !dialled { return .pair(.responder) }
        guard peerTrusted else { return .close }
        if hello.purpose == .stream { return .stream }
        return .link(tuned: ours == .link && hello.purpose == .link)
    }

    /// What a message on an established link asks for.
    enum LinkStep: Sendable, Equatable {
        /// Remember the peer as a subscriber and send it our current offer.
        case subscribe
        case recordOffer(ActivitySummary?)
        /// Answer with a snapshot of the activity, or refuse when too many are in flight.
        case answerFetch(request: UInt64, activity: ActivityID)
        case refuseFetch(request: UInt64, code: String, message: String)
        case resolveFetch(request: UInt64, PeerMessage.FetchResult)
        case noteContinued(ActivityID)
        case mergeAccount([[UInt8]])
        case considerKey(generation: UInt64, key: [UInt8])
        /// Offers kept for sleeping members (version 2): what the peer holds, and items.
        case compareKept([PeerMessage.KeptIndexEntry])
        case takeKept([[UInt8]])
        /// The peer's newest copy (version 3).
        case recordClipboard(ClipboardOffer?)
        /// Forget the peer's own activities with these persistent identifiers (nil: all of
        /// them) in the history here (version 4).
        case forgetHistory([String]?)
        /// The peer broke the protocol: tell it why and close.
        case violation(code: String, message: String)
        /// The peer is closing with this error: log it and close.
        case peerClosing(code: String, message: String)
    }

    /// Fetches one peer may have this device answer at once; more are refused with `busy`.
    static let maximumFetchesInFlight = 4

    /// `version`: the one the link speaks (the lower of the two hellos').
    static func step(for message: PeerMessage, fetchesInFlight: Int, version: UInt16 = PeerHello.currentVersion) -> LinkStep {
        switch message {
        case .hello:
            return .violation(code: "unexpected-hello", message: "a second hello")
        case .subscribe:
            return .subscribe
        case .offer(let summary):
            return .recordOffer(summary)
        case .fetch(let request, let id):
            guard fetchesInFlight < maximumFetchesInFlight else {
                return .refuseFetch(request: request, code: "busy", message: "too many fetches in flight; retry later")
            }
            return .answerFetch(request: request, activity: id)
        case .fetched(let request, let result):
            return .resolveFetch(request: request, result)
        case .continued(let id):
            return .noteContinued(id)
        case .streamOpen, .streamAccepted, .stream, .clipboardOpen:
            return .violation(code: "unexpected-message", message: "stream messages belong on a stream connection, not the link")
        case .account(let statements):
            return .mergeAccount(statements)
        case .advertisementKey(let generation, let key):
            return .considerKey(generation: generation, key: key)
        case .pairCommit, .pairNonce, .pairConfirm:
            return .violation(code: "unexpected-message", message: "pairing messages belong on a pairing connection, not the link")
        case .keptIndex where version < 2, .kept where version < 2:
            return .violation(code: "unexpected-message", message: "kept offers need version 2; this link speaks \(version)")
        case .clipboard where version < 3:
            return .violation(code: "unexpected-message", message: "clipboard offers need version 3; this link speaks \(version)")
        case .clipboard(let offer):
            return .recordClipboard(offer)
        case .forgetHistory where version < 4:
            return .violation(code: "unexpected-message", message: "forgetting history needs version 4; this link speaks \(version)")
        case .forgetHistory(let ids):
            return .forgetHistory(ids)
        case .keptIndex(let entries):
            return .compareKept(entries)
        case .kept(let items):
            return .takeKept(items)
        case .error(let code, let message):
            return .peerClosing(code: code, message: message)
        }
    }

    /// A failed snapshot for a peer's fetch, in the wire's terms.
    static func fetchFailure(_ e: HandoffError) -> PeerMessage.FetchResult {
        .failure(code: PeerErrorCode.wire(e.code), message: e.message)
    }
}
