import HandoffCore
import HandoffControlAPI

/// Who serves this workstation's copy when a paste asks for it.
enum ClipboardHolder: Sendable, Equatable {
    /// An app, through its event session (the session agent, for the desktop's
    /// clipboard): asked with `clipboard-requested`, it answers like a stream's owner.
    case session(String)
    /// handoffd itself: bytes given with the copy (`handoffctl copy`), in its one format.
    case bytes([UInt8])
}

/// The account's newest copy as this workstation sees it, and the decisions about it
/// (Docs/PeerProtocol.md §19). One copy at a time, like one clipboard: a newer copy,
/// here or on a linked workstation, replaces the older one everywhere. A value: each
/// event returns what `PeerService` performs, with the time passed in.
///
/// "Newer" compares when each was copied on this workstation's clock: a local copy's own
/// time, a peer's reception time less the age it said. A copy here after a peer's wins.
struct ClipboardTable {
    struct Entry: Sendable, Equatable {
        var id: ClipboardID
        var formats: [ClipboardFormat]
        var copiedAt: Timestamp
        var expiresAt: Timestamp
        /// Nil: copied here.
        var origin: DeviceID?
        var device: PeerDevice
        /// Only for a copy made here.
        var holder: ClipboardHolder?
    }

    enum Action: Sendable, Equatable {
        /// Our copy to every linked peer that speaks version 3 (nil: we have none now).
        case announce(ClipboardOffer?)
        /// The newest copy changed: the `clipboard` event (nil: nothing to paste).
        case emit(ClipboardRecord?)
    }

    /// Why a paste or a pull cannot have the bytes, in the local API's terms.
    struct Refusal: Error, Sendable, Equatable {
        var code: String
        var message: String
    }

    /// What a paste here reaches: our own holder, or a peer's copy.
    enum PasteTarget: Sendable, Equatable {
        case local(ClipboardHolder, ClipboardFormat, ClipboardID)
        case peer(DeviceID, ClipboardID, ClipboardFormat)
    }

    let lifetimeNanoseconds: Int64
    /// A format larger than this is neither announced nor taken from a peer.
    let maximumFormatBytes: Int64
    private(set) var newest: Entry?

    init(lifetimeSeconds: Int64, maximumFormatBytes: Int64) {
        lifetimeNanoseconds = lifetimeSeconds * 1_000_000_000
        self.maximumFormatBytes = maximumFormatBytes
    }

    // MARK: - Copies

    /// An app copied here. Formats over the size cap are refused rather than quietly left
    /// out, so the app knows what a paste elsewhere will not get.
    mutating func copy(_ formats: [ClipboardFormat], holder: ClipboardHolder, device: PeerDevice, at now: Timestamp) throws(Refusal) -> (ClipboardID, [Action]) {
        if let big = formats.first(where: { ($0.size ?? 0) > maximumFormatBytes }) {
            throw Refusal(code: "too_large", message: "\(big.type) is \(big.size ?? 0) bytes; the clipboard carries at most \(maximumFormatBytes) per format (clipboard-max-bytes)")
        }
        let id = ClipboardID.random()
        newest = Entry(id: id, formats: formats, copiedAt: now, expiresAt: now.adding(nanoseconds: lifetimeNanoseconds), origin: nil,
                       device: device, holder: holder)
        return (id, [.announce(ourOffer(at: now)), .emit(record(at: now))])
    }

    /// Our copy is withdrawn (the app said so, or its session ended): nothing to paste.
    mutating func withdraw(_ id: ClipboardID? = nil, at now: Timestamp) -> [Action] {
        guard let n = newest, n.origin == nil, id == nil || id == n.id else { return [] }
        newest = nil
        return [.announce(nil), .emit(nil)]
    }

    /// The session that holds our copy ended: it can serve no paste.
    mutating func sessionEnded(_ token: String, at now: Timestamp) -> [Action] {
        guard newest?.holder == .session(token) else { return [] }
        return withdraw(at: now)
    }

    /// A linked peer's copy (nil: it has none now). Taken when newer than ours or it
    /// replaces that peer's own; formats over the cap are left out (`dropped` counts
    /// them), and an offer left with none is ignored.
    mutating func received(_ offer: ClipboardOffer?, from origin: DeviceID, device: PeerDevice, at now: Timestamp) -> (actions: [Action], dropped: Int) {
        guard let offer else {
            guard newest?.origin == origin else { return ([], 0) }
            newest = nil
            return ([.emit(nil)], 0)
        }
        let formats = offer.formats.filter { ($0.size ?? 0) <= maximumFormatBytes }
        let dropped = offer.formats.count - formats.count
        let copiedAt = now.adding(nanoseconds: -min(offer.ageMilliseconds, lifetimeNanoseconds / 1_000_000) * 1_000_000)
        // Capped before scaling: a peer's `remaining` may be anything up to Int64.max.
        let remaining = min(offer.remainingMilliseconds, lifetimeNanoseconds / 1_000_000) * 1_000_000
        guard !formats.isEmpty, remaining > 0 else {
            // Nothing of it can be pasted here: as good as none from that peer.
            return (received(nil, from: origin, device: device, at: now).actions, dropped)
        }
        if let n = newest, n.origin != origin, n.copiedAt > copiedAt { return ([], dropped) }
        let wasOurs = newest != nil && newest?.origin == nil
        newest = Entry(id: offer.id, formats: formats, copiedAt: copiedAt, expiresAt: now.adding(nanoseconds: remaining), origin: origin,
                       device: device, holder: nil)
        return ((wasOurs ? [.announce(nil)] : []) + [.emit(record(at: now))], dropped)
    }

    /// The link to a peer ended: its copy cannot be pasted any more.
    mutating func linkEnded(_ origin: DeviceID, at now: Timestamp) -> [Action] {
        received(nil, from: origin, device: PeerDevice(id: "", name: ""), at: now).actions
    }

    /// What has expired goes.
    mutating func expire(at now: Timestamp) -> [Action] {
        guard let n = newest, n.expiresAt <= now else { return [] }
        newest = nil
        return (n.origin == nil ? [.announce(nil)] : []) + [.emit(nil)]
    }

    var nextExpiry: Timestamp? { newest?.expiresAt }

    // MARK: - What is said

    /// Our copy as a newly linked peer is told it, with its age and what is left of its life.
    func ourOffer(at now: Timestamp) -> ClipboardOffer? {
        guard let n = newest, n.origin == nil, n.expiresAt > now else { return nil }
        return ClipboardOffer(id: n.id, formats: n.formats, ageMilliseconds: max(0, n.copiedAt.nanoseconds(until: now) / 1_000_000),
                              remainingMilliseconds: max(0, now.nanoseconds(until: n.expiresAt) / 1_000_000))
    }

    func record(at now: Timestamp) -> ClipboardRecord? {
        guard let n = newest, n.expiresAt > now else { return nil }
        return ClipboardRecord(id: n.id, formats: n.formats, device: n.device, local: n.origin == nil, copiedAt: n.copiedAt, expiresAt: n.expiresAt)
    }

    // MARK: - Pastes

    /// A peer asks for our copy's bytes in one format: who serves them. Refused when the
    /// copy is no longer ours and the newest (copied again since, withdrawn, expired).
    func source(of id: ClipboardID, type: String, at now: Timestamp) throws(Refusal) -> (ClipboardHolder, ClipboardFormat) {
        guard let n = newest, n.origin == nil, n.expiresAt > now, let holder = n.holder else {
            throw Refusal(code: "clipboard_changed", message: "the copy asked for is no longer this workstation's newest (copied again, cleared or expired); paste again")
        }
        guard n.id == id else {
            throw Refusal(code: "clipboard_changed", message: "something was copied again since; paste again to get the newest copy")
        }
        guard let format = n.formats.first(where: { $0.type == type }) else {
            throw Refusal(code: "format_not_offered", message: "the copy was not offered as \(type); it is offered as \(n.formats.map(\.type).joined(separator: ", "))")
        }
        return (holder, format)
    }

    /// A paste here: the newest copy in `type` (nil: its first format); with `id`, only
    /// if that copy is still the newest.
    func pasteTarget(id: ClipboardID?, type: String?, at now: Timestamp) throws(Refusal) -> PasteTarget {
        guard let n = newest, n.expiresAt > now else {
            throw Refusal(code: "clipboard_empty", message: "nothing copied on this workstation or a linked one can be pasted (copies last \(lifetimeNanoseconds / 1_000_000_000) s)")
        }
        if let id, id != n.id {
            throw Refusal(code: "clipboard_changed", message: "something was copied again since; paste again to get the newest copy")
        }
        guard let format = type.map({ t in n.formats.first { $0.type == t } }) ?? n.formats.first else {
            throw Refusal(code: "format_not_offered", message: "the newest copy is not offered as \(type ?? ""); it is offered as \(n.formats.map(\.type).joined(separator: ", "))")
        }
        if let origin = n.origin { return .peer(origin, n.id, format) }
        guard let holder = n.holder else { throw Refusal(code: "clipboard_empty", message: "the copy here has nobody to serve it") }
        return .local(holder, format, n.id)
    }
}
