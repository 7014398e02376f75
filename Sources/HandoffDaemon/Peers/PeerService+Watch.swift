/// Which instances Avahi keeps resolving. A resolver left open reports TXT changes, but it
/// also keeps avahi-daemon querying the network for the instance's records, and every
/// avahi-daemon on the link reads those queries: with 32 workstations starting together
/// the open resolvers took the avahi-daemons most of two cores for half a minute
/// (bench-scale, Performance.md "Scale"). So a resolver closes at its first answer, and an
/// instance is watched only while a change of its TXT could still matter (PeerProtocol.md
/// §3.2): a new hint says to dial a device that is not linked, and waits for its backoff, at
/// once; and a pairing tag may appear on a stranger's.
extension PeerService {
    /// After a link came or went: whose changes matter may have changed for every instance.
    func updateWatches() { perform(dialBook.watchAll(dialFacts)) }
}
