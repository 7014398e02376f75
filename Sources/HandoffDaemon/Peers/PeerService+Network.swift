import Logging

/// Network changes (PeerProtocol.md §3.3).
extension PeerService {
    /// A new address means a new network: a new advertisement, so nothing links the device
    /// across networks, published with the addresses it has now. Any change (addresses or
    /// routes) makes every peer that is not linked worth dialling at once, whatever its
    /// backoff said: the path that failed may be there now.
    func networkChanged(_ snapshot: NetworkSnapshot, _ change: NetworkSnapshot.Change) {
        network = snapshot
        logger.info("network changed", metadata: ["addresses": "\(change.addresses ? snapshot.addresses.count : -1)",
                                                  "routes": "\(change.routes)"])
        if change.addresses, avahi != nil { rotateAdvertisement() }
        perform(dialBook.networkChanged(dialFacts, at: clock.now()))
    }
}
