import HandoffCore

/// Which media player's playback is the current activity. The player that is playing (the
/// one that started last, if several) wins; else the one that played most recently, still
/// paused on its track. Position is not pushed: it is worked out when another workstation
/// takes the activity (position at the last report + elapsed × rate while playing). A pure
/// state machine: player states and times come in, offers come out.
public struct MediaSource: Sendable {
    public struct Player: Sendable, Equatable {
        public var state: MediaPlayers.State
        /// When `state.position` was read.
        public var positionAt: Timestamp
        /// Last time it was seen playing.
        public var lastPlaying: Timestamp?
    }

    /// What the current activity should say.
    public struct Offer: Sendable, Equatable {
        public var player: String
        public var url: String
        public var title: String?
        public var artist: String?
        public var length: Int64?
        public var playing: Bool
    }

    public enum Action: Sendable, Equatable {
        /// A new track (or another player): make a new activity current.
        case offer(Offer)
        /// The same track: its playing state changed.
        case update(Offer)
        /// Nothing plays any more: end the activity.
        case withdraw
    }

    private(set) var players: [String: Player] = [:]
    private(set) var offered: Offer?

    public init() {}

    /// A player's state as read now.
    public mutating func changed(_ name: String, _ state: MediaPlayers.State?, at now: Timestamp) -> [Action] {
        guard let state else { return gone(name) }
        var p = players[name] ?? Player(state: state, positionAt: now)
        p.state = state
        if state.position != nil { p.positionAt = now }
        if state.status == "Playing" { p.lastPlaying = now }
        players[name] = p
        return decide()
    }

    public mutating func seeked(_ name: String, to position: Int64, at now: Timestamp) {
        players[name]?.state.position = min(max(0, position), 1 << 50)
        players[name]?.positionAt = now
    }

    public mutating func gone(_ name: String) -> [Action] {
        players[name] = nil
        return decide()
    }

    /// Where `name` is now, in µs: extrapolated while it plays, clamped to the length.
    public func position(of name: String, at now: Timestamp) -> Int64? {
        guard let p = players[name], let base = p.state.position else { return nil }
        var position = min(max(base, 0), 1 << 50)
        if p.state.status == "Playing" {
            let rate = p.state.rate.isFinite ? min(max(p.state.rate, 0), 100) : 1
            let elapsed = Double(max(0, p.positionAt.nanoseconds(until: now))) / 1000 * rate
            position += Int64(min(elapsed, Double(1 << 52)))
        }
        if let length = p.state.length, length > 0 { position = min(position, length) }
        return max(0, position)
    }

    private mutating func decide() -> [Action] {
        let candidates = players.filter { $0.value.state.url != nil && $0.value.lastPlaying != nil && $0.value.state.status != "Stopped" }
        let chosen = candidates.max { a, b in
            let ap = a.value.state.status == "Playing", bp = b.value.state.status == "Playing"
            if ap != bp { return !ap }
            return (a.value.lastPlaying!, a.key) < (b.value.lastPlaying!, b.key)
        }
        guard let (name, p) = chosen, let url = p.state.url else {
            if offered != nil {
                offered = nil
                return [.withdraw]
            }
            return []
        }
        let offer = Offer(player: name, url: url, title: p.state.title, artist: p.state.artist, length: p.state.length,
                          playing: p.state.status == "Playing")
        defer { offered = offer }
        guard let previous = offered, previous.player == offer.player, previous.url == offer.url else { return [.offer(offer)] }
        return previous == offer ? [] : [.update(offer)]
    }
}
