import HandoffCore
import HandoffControlAPI
import HandoffPeerProtocol

/// What `PeerBook` needs to know of a link: who is at the other end, who dialled, and
/// from where. `PeerLink` in the daemon; a bare object in tests.
protocol BookedLink: AnyObject, Sendable {
    var deviceID: DeviceID { get }
    var deviceName: String { get }
    /// With two connections to one peer, both sides keep the one dialled by the smaller ID.
    var dialledBy: DeviceID { get }
    var remoteAddress: String { get }
}

extension BookedLink {
    var device: PeerDevice { PeerDevice(id: deviceID.description, name: deviceName) }
}

/// Who this workstation is linked to and what passes over the links: one link per
/// trusted peer (and which of two to keep), who subscribed to our offer, what each peer
/// offers, the devices met (strangers included, a bounded few), which peer each recently
/// continued activity came from (the streams open per peer are `StreamShares`). A value: every event
/// returns the actions `PeerService` performs (close a link, send a message, emit a
/// control event), and the time comes with each call, so it is tested without sockets.
struct PeerBook<Link: BookedLink> {
    static var rememberedStrangers: Int { 64 }
    static var rememberedContinuations: Int { 64 }

    private(set) var links: [DeviceID: Link] = [:]
    /// Every device met: trusted ones, and the latest few strangers.
    private(set) var devices: [DeviceID: DeviceRecord] = [:]
    /// This workstation's offer, sent to every subscriber when it changes (to those it is
    /// not for, as nothing offered).
    private(set) var ourOffer: OfferedActivity?
    private var subscribers: Set<DeviceID> = []
    private var continuedFrom: [ActivityID: DeviceID] = [:]
    private var continuedOrder: [ActivityID] = []
    init() {}

    enum Action {
        case close(Link)
        case send(Link, PeerMessage)
        /// For the control API's event stream, in the order the book produced them.
        case emit(ControlEvent)
    }

    // MARK: - Links

    /// A connection finished its hello. Nil when it is to be dropped: its peer is no
    /// longer trusted (withdrawn while it said hello), or a link dialled from the other end
    /// is the one both sides keep. Otherwise it is the peer's link, and the actions close
    /// the one it replaces (dialled from the same end: the peer may have restarted while
    /// our old socket still looks open), subscribe to the peer's offer, and announce it.
    mutating func attach(_ link: Link, trusted: Bool, trustedName: String?, at now: Timestamp) -> [Action]? {
        guard trusted else { return nil }
        let existing = links[link.deviceID]
        if let existing, !DialPolicy.keepsNewLink(existingDialledBy: existing.dialledBy, newDialledBy: link.dialledBy) { return nil }
        var actions: [Action] = []
        if let existing {
            actions.append(.close(existing))
            subscribers.remove(link.deviceID)
        }
        links[link.deviceID] = link
        var record = devices[link.deviceID] ?? DeviceRecord(id: link.deviceID, name: link.deviceName)
        record.name = trustedName ?? link.deviceName
        record.addresses.insert(link.remoteAddress)
        record.lastSeen = now
        devices[link.deviceID] = record
        actions.append(.send(link, .subscribe))
        // A replaced duplicate is the same peer, still connected.
        if existing == nil { actions.append(.emit(.peerConnected(link.device))) }
        return actions
    }

    /// Whether `link` is its peer's link (a replaced one may still deliver what it had buffered).
    func isCurrent(_ link: Link) -> Bool { links[link.deviceID] === link }

    /// The link's connection ended. Nothing if it was not the peer's link (it was
    /// replaced, or never attached); otherwise the peer's offer goes with it.
    mutating func detach(_ link: Link, at now: Timestamp) -> [Action] {
        guard isCurrent(link) else { return [] }
        let id = link.deviceID
        links[id] = nil
        subscribers.remove(id)
        devices[id]?.lastSeen = now
        let hadOffer = devices[id]?.offer != nil
        devices[id]?.offer = nil
        return (hadOffer ? [.emit(.peerOffer(link.device, nil))] : []) + [.emit(.peerDisconnected(link.device, reason: "connection closed"))]
    }

    /// Trust in the device was withdrawn (or it left the account): its link closes.
    func untrusted(_ id: DeviceID) -> [Action] { links[id].map { [.close($0)] } ?? [] }

    /// Every link closes (the daemon is stopping).
    func closeAll() -> [Action] { links.values.map { .close($0) } }

    // MARK: - Offers

    /// The peer asked for our offer: it gets it now, and every change from now on.
    mutating func subscribe(_ link: Link) -> [Action] {
        guard isCurrent(link) else { return [] }
        subscribers.insert(link.deviceID)
        return [.send(link, .offer(Self.summary(of: ourOffer, for: link.deviceID)))]
    }

    /// This workstation's offer changed (nil: it offers nothing).
    mutating func offerChanged(_ offer: OfferedActivity?) -> [Action] {
        ourOffer = offer
        return subscribers.sorted().compactMap { links[$0] }.map { .send($0, .offer(Self.summary(of: offer, for: $0.deviceID))) }
    }

    /// What `device` is told we offer: nothing when the offer is meant for others only.
    private static func summary(of offer: OfferedActivity?, for device: DeviceID) -> ActivitySummary? {
        guard let offer, offer.isFor(device) else { return nil }
        return offer.summary
    }

    /// The peer's offer changed.
    mutating func received(_ offer: ActivitySummary?, from link: Link) -> [Action] {
        guard isCurrent(link) else { return [] }
        devices[link.deviceID, default: DeviceRecord(id: link.deviceID, name: link.deviceName)].offer = offer
        return [.emit(.peerOffer(link.device, offer))]
    }

    /// What the linked peers offer and has not expired, by device ID.
    func offers(at now: Timestamp) -> [(link: Link, offer: ActivitySummary)] {
        links.sorted { $0.key < $1.key }.compactMap { id, link in
            guard let offer = devices[id]?.offer, !(offer.expirationDate.map { $0 <= now } ?? false) else { return nil }
            return (link, offer)
        }
    }

    // MARK: - Devices met

    /// A device presented a certificate we do not trust. Strangers can show any number of
    /// certificates: only the latest few are remembered (for pairing and doctor).
    mutating func sawStranger(_ id: DeviceID, name: String?, address: String, isTrusted: (DeviceID) -> Bool, at now: Timestamp) {
        let strangers = devices.values.filter { !isTrusted($0.id) && links[$0.id] == nil }
        if devices[id] == nil, strangers.count >= Self.rememberedStrangers,
           let oldest = strangers.min(by: { ($0.lastSeen ?? Timestamp(seconds: 0), $0.id) < ($1.lastSeen ?? Timestamp(seconds: 0), $1.id) }) {
            devices[oldest.id] = nil
        }
        var record = devices[id] ?? DeviceRecord(id: id, name: name ?? "")
        if let name, record.name.isEmpty { record.name = name }
        record.addresses.insert(address)
        record.lastSeen = now
        devices[id] = record
    }

    // MARK: - Continued activities and their streams

    /// An activity was continued here from `device`: its streams are asked of that device
    /// (the latest `rememberedContinuations` are kept).
    mutating func continued(_ id: ActivityID, from device: DeviceID) {
        if continuedFrom.updateValue(device, forKey: id) == nil { continuedOrder.append(id) }
        if continuedOrder.count > Self.rememberedContinuations { continuedFrom[continuedOrder.removeFirst()] = nil }
    }

    /// The workstation an activity was continued from, linked or not.
    func continuedOrigin(of id: ActivityID) -> DeviceID? { continuedFrom[id] }

    /// The link to the workstation an activity was continued from, or else to one that offers it.
    func origin(of id: ActivityID) -> Link? {
        if let device = continuedFrom[id], let link = links[device] { return link }
        return links.sorted { $0.key < $1.key }.first { devices[$0.key]?.offer?.id == id }?.value
    }
}
