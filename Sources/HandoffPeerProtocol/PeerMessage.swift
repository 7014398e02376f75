import HandoffCore
import HandoffStreamFrames

/// The messages of the peer protocol (Docs/PeerProtocol.md). Each travels in one frame:
/// a 4-byte big-endian length, a 1-byte type, and a body. The hello's body starts with the
/// magic and version; every other body is one property-list dictionary in the binary
/// encoding.
public enum PeerMessage: Sendable, Equatable {
    case hello(PeerHello)
    /// Send me your offer now and whenever it changes.
    case subscribe
    /// My current offer; nil: nothing is offered (resigned, invalidated, expired).
    case offer(ActivitySummary?)
    case fetch(requestID: UInt64, activityID: ActivityID)
    case fetched(requestID: UInt64, FetchResult)
    /// The receiver's activity was continued by the sender.
    case continued(activityID: ActivityID)
    /// The sender is closing the connection because of this.
    case error(code: String, message: String)
    /// First message on a stream connection: open a continuation stream to this activity.
    /// `document`: the activity's document file rather than its app's stream.
    case streamOpen(activityID: ActivityID, document: Bool = false)
    /// The origin's owner took the stream; `length` is the size it announced, if any.
    /// Stream frames follow in both directions.
    case streamAccepted(length: Int64?)
    /// A continuation stream's frame (data, end, error), on a stream connection only.
    case stream(StreamFrame)
    /// Pairing connections only (Docs/PeerProtocol.md §16): the responder's commitment
    /// to its nonce, each side's nonce, and "the user here confirmed the code".
    case pairCommit([UInt8])
    case pairNonce([UInt8])
    case pairConfirm
    /// On the link: account statements (Docs/PeerProtocol.md §17), each as its bytes.
    case account([[UInt8]])
    /// On the link: the account's shared advertisement key (§3.1) and its generation.
    case advertisementKey(generation: UInt64, key: [UInt8])
    /// On a version 2 link (§18): per origin, the sequence of the kept offer the sender
    /// holds, so the other side sends only what is newer.
    case keptIndex([KeptIndexEntry])
    /// On a version 2 link (§18): signed kept offers or withdrawals, each as its bytes.
    case kept([[UInt8]])
    /// On a version 3 link (§19): the sender's newest copy (formats, never bytes); nil:
    /// none any more (withdrawn, expired, or copied from another workstation since).
    case clipboard(ClipboardOffer?)
    /// First message on a stream connection (version 3): send me the bytes of this copy
    /// in this format. Answered like `streamOpen`.
    case clipboardOpen(id: ClipboardID, type: String)
    /// On a version 4 link (§20): forget, in your history, the sender's own activities with
    /// these persistent identifiers; nil: all of the sender's activities.
    case forgetHistory(persistentIdentifiers: [String]?)

    /// One origin's entry in `keptIndex`: its device ID's 32 bytes and a sequence.
    public struct KeptIndexEntry: Sendable, Equatable {
        public var origin: [UInt8]
        public var sequence: UInt64
        public init(origin: [UInt8], sequence: UInt64) {
            self.origin = origin
            self.sequence = sequence
        }
    }

    /// At most this many entries or items in one `keptIndex` or `kept` message.
    public static let maximumKeptItems = 256
    /// At most this many persistent identifiers in one `forgetHistory`.
    public static let maximumForgotten = ActivityLimits.maximumForgottenIdentifiers

    public enum FetchResult: Sendable, Equatable {
        case activity(Activity, stale: Bool)
        case failure(code: String, message: String)
    }

    public var typeCode: UInt8 {
        switch self {
        case .hello: 0x01
        case .subscribe: 0x02
        case .offer: 0x03
        case .fetch: 0x04
        case .fetched: 0x05
        case .continued: 0x06
        case .error: 0x07
        case .streamOpen: 0x08
        case .streamAccepted: 0x09
        case .stream(let f): f.typeCode
        case .pairCommit: 0x0A
        case .pairNonce: 0x0B
        case .pairConfirm: 0x0C
        case .account: 0x0D
        case .advertisementKey: 0x0E
        case .keptIndex: 0x0F
        case .kept: 0x15
        case .clipboard: 0x16
        case .clipboardOpen: 0x17
        case .forgetHistory: 0x18
        }
    }
}

/// The first message each side sends.
public struct PeerHello: Sendable, Equatable {
    /// "HNDF": says this is the handoff peer protocol at all.
    public static let magic: [UInt8] = [0x48, 0x4E, 0x44, 0x46]
    public static let currentVersion: UInt16 = 4
    /// The oldest version this implementation still speaks.
    public static let minimumVersion: UInt16 = 1

    public var version: UInt16
    public var minimumVersion: UInt16
    public var deviceName: String
    /// What the connection is for: the one long-lived link, or one continuation stream.
    public var purpose: Purpose
    /// The port the sender's peer listener accepts on, so the other side can open stream
    /// connections back to it whichever side dialled the link.
    public var listenPort: UInt16?
    /// The sender's clock when it sent the hello: the receiver learns how far apart the
    /// two clocks are (expiry and history times depend on it). Optional: older peers omit it.
    public var time: Timestamp?
    /// The mDNS instance name the sender advertises now (links only): the receiver knows
    /// that instance is linked and does not dial it too. Optional: older peers omit it.
    public var instance: String?

    /// The longest instance name: one DNS label.
    public static let maximumInstanceBytes = 63

    public enum Purpose: String, Sendable {
        case link
        case stream
        /// Pairing by code, between two devices that do not trust each other yet.
        case pair
    }

    public init(version: UInt16 = PeerHello.currentVersion, minimumVersion: UInt16 = PeerHello.minimumVersion, deviceName: String,
                purpose: Purpose = .link, listenPort: UInt16? = nil, time: Timestamp? = nil, instance: String? = nil) {
        self.time = time
        self.instance = instance
        self.version = version
        self.minimumVersion = minimumVersion
        self.deviceName = deviceName
        self.purpose = purpose
        self.listenPort = listenPort
    }

    public enum Compatibility: Equatable {
        case compatible(UInt16)
        /// The peer is older than we still speak.
        case peerTooOld
        /// The peer requires a newer version than we speak.
        case peerTooNew
    }

    /// The version both speak, if any.
    public func compatibility(with ours: PeerHello) -> Compatibility {
        if version < ours.minimumVersion { return .peerTooOld }
        if minimumVersion > ours.version { return .peerTooNew }
        return .compatible(min(version, ours.version))
    }
}
