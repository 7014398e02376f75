import HandoffAvahi

/// Which instances Avahi keeps resolving. A resolver left open reports TXT changes, but it
/// also keeps avahi-daemon querying the network for the instance's records, and every
/// avahi-daemon on the link reads those queries: with 32 workstations starting together
/// the open resolvers took the avahi-daemons most of two cores for half a minute
/// (bench-scale, Performance.md "Scale"). So a resolver closes at its first answer, and an
/// instance is watched only while a change of its TXT could still matter (PeerProtocol.md
/// §3.2): a new hint says to dial a device that is not linked, and waits for its backoff, at
/// once; and a pairing tag may appear on a stranger's.
extension PeerService {
    func wantsChanges(_ record: ServiceRecord, everyTrustedLinked: Bool) -> Bool {
        // Being dialled: the handshake will tell more than any TXT could.
        if record.isSelf || record.dialing { return false }
        // Held back for its own dial (DialPolicy.yields): that link will tell more, and soon;
        // a resolver open meanwhile made the avahi-daemons query all through a mass start
        // (24 workstations: about twice their CPU, and the links 0.6 s later).
        if record.holdingBack { return false }
        if let id = record.deviceID { return links[id] == nil }
        // Not identified yet. One whose tag checks out is a member of the account: with
        // every trusted device linked it is one of them, and nothing it says matters.
        return !(everyTrustedLinked && isMember(advertising: record.service.txt["t"]))
    }

    var everyTrustedLinked: Bool { trust.all.allSatisfy { links[$0.id] != nil } }

    /// Static peers' keys are not Avahi's: it ignores them. Nothing is watched any more once
    /// the daemon is stopping (its links closing would otherwise open a resolver for each).
    func updateWatch(_ key: ServiceKey, everyTrustedLinked: Bool? = nil) {
        guard let avahi, accepting, let record = services[key] else { return }
        let wanted = wantsChanges(record, everyTrustedLinked: everyTrustedLinked ?? self.everyTrustedLinked)
        guard wanted != record.watched else { return }
        services[key]?.watched = wanted
        avahi.watchChanges(of: key, wanted)
    }

    /// After a link came or went: whose changes matter may have changed for every instance.
    func updateWatches() {
        let all = everyTrustedLinked
        for key in services.keys { updateWatch(key, everyTrustedLinked: all) }
    }
}
