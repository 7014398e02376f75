/// The numbers KDE Connect's protocol and its security record fix (Docs/KDEConnect.md).
public enum KDEConnectLimits {
    /// Identities come by UDP to this port, and TCP listeners take the first free port from here.
    public static let discoveryPort = 1716
    /// Ports a peer may listen on, for links and payloads; nothing outside is ever dialled
    /// (CVE-2020-26164: a UDP identity made kdeconnectd connect anywhere).
    public static let ports: ClosedRange<Int> = 1716...1764
    /// Where a sender offers a payload (KDE's own range, inside `ports`).
    public static let payloadPorts: ClosedRange<Int> = 1739...1764
    /// An identity before TLS: at most this many bytes, within `identityDeadline`.
    public static let identityBytes = 8192
    public static let identityDeadlineNanoseconds: Int64 = 1_000_000_000
    /// Identities waiting for an answer, and links to devices not paired, at once.
    public static let pendingIdentities = 42
    public static let unpairedLinks = 42
    /// One packet on a link: before pairing only identities and pairing travel; after it, a
    /// clipboard of up to 1 MiB of text, escaped, fits.
    public static let unpairedPacketBytes = 64 * 1024
    public static let pairedPacketBytes = 4 * 1024 * 1024
    /// A pairing request not answered within this is cancelled.
    public static let pairingTimeoutNanoseconds: Int64 = 30_000_000_000
    /// A v8 request whose timestamp is further than this from our clock is refused.
    public static let pairingClockSkewSeconds: Int64 = 1800
    /// The versions spoken: 7 (kdeconnect 22.12, Debian 12) and 8 (25.04, Debian 13, current apps).
    public static let protocolVersions: ClosedRange<Int> = 7...8
    /// Capabilities named in one identity, and the length of each.
    public static let capabilities = 128
    public static let capabilityBytes = 128
}
