/// Error codes are one vocabulary spelt two ways, as the two documents have always said:
/// handoffd's domain and the local API use underscores (`not_offered`, LocalAPI.md §3),
/// the peer protocol hyphens (`not-offered`, PeerProtocol.md §7). These are the only two
/// conversions; a code is converted where it crosses between a peer and handoffd.
public enum PeerErrorCode {
    /// A domain code as a peer reads it.
    public static func wire(_ local: String) -> String { String(local.map { $0 == "_" ? "-" : $0 }) }

    /// A peer's code as the domain (and the local API) spells it.
    public static func local(_ wire: String) -> String { String(wire.map { $0 == "-" ? "_" : $0 }) }
}
