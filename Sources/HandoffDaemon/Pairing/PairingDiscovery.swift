/// What to do with another workstation's pairing advertisement (a `pair` tag in its TXT).
/// Both windows open: the side with the smaller tag dials, one dial per tag at a time
/// (its IPv4 and IPv6 addresses could each take one side's only attempt slot, and both
/// fail), another address only after one failed. Only theirs open: the user is told,
/// once per tag (a notification may offer to pair). A value, tested without Avahi.
struct PairingDiscovery {
    /// Tags announced while our window was closed are remembered up to this many.
    static let rememberedAnnouncements = 64

    enum Action: Equatable, Sendable {
        case dial(address: String, port: Int, tag: String)
        case announce(tag: String)
    }

    private var dialled: Set<String> = []
    /// "tag@address" that could not be reached in this window.
    private var unreachable: Set<String> = []
    private var announced: Set<String> = []

    /// Our window opened: every advertiser may be dialled again.
    mutating func windowOpened() {
        dialled = []
        unreachable = []
    }

    /// A pairing advertisement, seen at `address`. `ours`: our window's tag, nil when it is
    /// closed; `attemptRunning`: an attempt is under way already.
    mutating func found(tag theirs: String, address: String, port: Int, ours: String?, attemptRunning: Bool) -> Action? {
        guard !theirs.isEmpty else { return nil }
        guard let ours else {
            if announced.count >= Self.rememberedAnnouncements { announced.removeAll() }
            return announced.insert(theirs).inserted ? .announce(tag: theirs) : nil
        }
        guard !attemptRunning, theirs != ours, ours < theirs else { return nil }
        guard !unreachable.contains(theirs + "@" + address), dialled.insert(theirs).inserted else { return nil }
        return .dial(address: address, port: port, tag: theirs)
    }

    /// The dial to `tag` at `address` failed: another of its addresses may be tried.
    mutating func dialFailed(tag: String, address: String) {
        dialled.remove(tag)
        unreachable.insert(tag + "@" + address)
    }
}
