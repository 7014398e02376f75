import HandoffCore

/// Who the KDE Connect endpoint lets in before TLS has said who they are, as a value: the
/// endpoint tells it what it heard and accepted, and the time; it answers whom to dial and
/// what to close. The limits are KDE's own, after CVE-2020-26164 (unauthenticated peers
/// exhausted kdeconnectd's CPU, memory and connections):
/// - a UDP identity makes at most one dial to its device at a time, to a port in 1716-1764
///   only (`KDEConnectIdentity` checks the port), and at most `pendingIdentities` dials are
///   under way at once; a device already linked, or ourselves, is not dialled;
/// - a connection that came in has `identityDeadline` to send its identity, and at most
///   `pendingIdentities` may be waiting at once;
/// - at most `unpairedLinks` links to devices not paired.
/// A UDP identity changes nothing else: not pairing, not a name (CVE-2025-32899, -32900).
/// Nor may a paired device come back in an older version than it last linked with
/// (CVE-2025-66270).
public struct KDEConnectAdmission: Sendable {
    public let own: KDEConnectDeviceID
    public var pendingIdentities = KDEConnectLimits.pendingIdentities
    public var unpairedLinkLimit = KDEConnectLimits.unpairedLinks
    public var identityDeadline = KDEConnectLimits.identityDeadlineNanoseconds

    /// Dials under way, by device.
    public private(set) var dialling: Set<KDEConnectDeviceID> = []
    /// Connections that came in and have not sent their identity, by the endpoint's number.
    public private(set) var waiting: [Int: Timestamp] = [:]
    /// Linked devices, and whether each is paired.
    public private(set) var linked: [KDEConnectDeviceID: Bool] = [:]

    public init(own: KDEConnectDeviceID) { self.own = own }

    public enum Refusal: Sendable, Equatable, CustomStringConvertible {
        case ourselves
        case linked
        case dialling
        case tooManyPending
        case downgrade(from: Int, to: Int)
        case tooManyUnpaired
        public var description: String {
            switch self {
            case .ourselves: "it is this device"
            case .linked: "it is linked already"
            case .dialling: "it is being dialled already"
            case .tooManyPending: "too many identities are waiting already"
            case .downgrade(let from, let to): "it is paired with protocol \(from) and now says \(to)"
            case .tooManyUnpaired: "too many devices that are not paired are linked already"
            }
        }
    }

    /// A UDP identity (already read by `KDEConnectIdentity(_, needsPort: true)`). `pairedVersion`:
    /// the protocol version the device last linked with, if it is paired. Nil: dial it.
    public mutating func heard(_ identity: KDEConnectIdentity, pairedVersion: Int?) -> Refusal? {
        let id = identity.deviceID
        if id == own { return .ourselves }
        if linked[id] != nil { return .linked }
        if dialling.contains(id) { return .dialling }
        if let pairedVersion, identity.protocolVersion < pairedVersion { return .downgrade(from: pairedVersion, to: identity.protocolVersion) }
        if dialling.count + waiting.count >= pendingIdentities { return .tooManyPending }
        dialling.insert(id)
        return nil
    }

    /// The dial to `id` ended: linked (then `linkUp` follows) or not.
    public mutating func dialEnded(_ id: KDEConnectDeviceID) { dialling.remove(id) }

    /// A connection came in (the endpoint numbers them): false to close it now. Its
    /// identity is due by the deadline `expired` checks.
    public mutating func accepted(_ connection: Int, at now: Timestamp) -> Bool {
        guard dialling.count + waiting.count < pendingIdentities else { return false }
        waiting[connection] = now.adding(nanoseconds: identityDeadline)
        return true
    }

    /// Its identity arrived (or it closed): it waits no more.
    public mutating func identified(_ connection: Int) { waiting[connection] = nil }

    /// The connections whose identity is late, to close; they wait no more.
    public mutating func expired(at now: Timestamp) -> [Int] {
        let late = waiting.filter { $0.value <= now }.keys.sorted()
        for c in late { waiting[c] = nil }
        return late
    }

    /// The earliest deadline of those waiting, for the endpoint's one timer.
    public var nextDeadline: Timestamp? { waiting.values.min() }

    /// TLS and the identities are done: may `id` be linked? `pairedVersion` as for `heard`.
    public mutating func linkUp(_ id: KDEConnectDeviceID, version: Int, pairedVersion: Int?) -> Refusal? {
        if id == own { return .ourselves }
        if let pairedVersion, version < pairedVersion { return .downgrade(from: pairedVersion, to: version) }
        if linked[id] != nil { return .linked }
        let paired = pairedVersion != nil
        if !paired, linked.values.filter({ !$0 }).count >= unpairedLinkLimit { return .tooManyUnpaired }
        linked[id] = paired
        return nil
    }

    /// Pairing changed on a link: a paired device no longer counts against the unpaired limit.
    public mutating func pairingChanged(_ id: KDEConnectDeviceID, paired: Bool) {
        if linked[id] != nil { linked[id] = paired }
    }

    public mutating func linkDown(_ id: KDEConnectDeviceID) { linked[id] = nil }
}
