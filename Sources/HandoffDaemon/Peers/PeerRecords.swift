import HandoffAvahi
import HandoffCore

/// A device this workstation has met: trusted, or seen presenting a certificate.
struct DeviceRecord: Sendable {
    var id: DeviceID
    var name: String
    var addresses: Set<String> = []
    var lastSeen: Timestamp?
    /// The activity it offers, from its last `offer` message.
    var offer: ActivitySummary?
}

/// A `_handoff._tcp` instance found by mDNS, and what dialling it has taught us.
struct ServiceRecord: Sendable {
    var service: DiscoveredService
    /// Learnt from its certificate on the first handshake.
    var deviceID: DeviceID?
    /// It is this very daemon (its certificate is ours).
    var isSelf = false
    var dialing = false
    var failures = 0
    var notBefore: Timestamp?
    var retryScheduled = false
    /// Since when we have held back our dial for the instance's own (`DialPolicy.yields`).
    var heldBackSince: Timestamp?
    /// The last decision was to wait for the instance's own dial: its resolver stays closed
    /// until the retry at the end of the wait looks again.
    var holdingBack = false
    /// mDNS removed it while a dial (or the connection it made) was still running: kept
    /// until that ends, so a quick re-add finds its state instead of dialling twice.
    var gone = false
    /// Configured (`peer = HOST:PORT`), not found by mDNS: never removed, retried on a timer.
    var isStatic = false
    /// Where a link to `deviceID` last reached it (`DialBook.unlinked`): dialled only while
    /// mDNS knows no instance that is or may be that device, and only until `lastLinkUntil`.
    var isLastLink = false
    var lastLinkUntil: Timestamp?
    /// Avahi keeps reporting its TXT changes (`DialBook`'s watch decision).
    var watched = false
    /// Why the last dial did not give a link, for `handoffctl doctor`.
    var lastError: DialFailure?
    var lastErrorAt: Timestamp?
    var instance: String { service.key.name + "." + service.key.domain }
}
