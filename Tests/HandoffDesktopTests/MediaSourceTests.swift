import HandoffCore
@testable import HandoffDesktop
import Testing

@Suite("Media source")
struct MediaSourceTests {
    func at(_ s: Double) -> Timestamp { Timestamp(seconds: 1_800_000_000).adding(nanoseconds: Int64(s * 1e9)) }

    func state(_ status: String, url: String? = "file:///m/a.ogg", position: Int64? = 0, rate: Double = 1, length: Int64? = 100_000_000) -> MediaPlayers.State {
        MediaPlayers.State(status: status, url: url, title: "A", artist: nil, trackID: "/t/1", length: length, position: position, rate: rate, canSeek: true)
    }

    @Test func playingPlayerIsOfferedOnceAndUpdatedQuietly() {
        var m = MediaSource()
        #expect(m.changed("p1", state("Stopped", url: nil), at: at(0)).isEmpty)
        guard case .offer(let o)? = m.changed("p1", state("Playing"), at: at(1)).first else { Issue.record("no offer"); return }
        #expect(o.player == "p1" && o.url == "file:///m/a.ogg" && o.playing)
        // Position reports alone change nothing offered.
        #expect(m.changed("p1", state("Playing", position: 5_000_000), at: at(6)).isEmpty)
        // Pausing is an update of the same activity, not a new one.
        guard case .update(let u)? = m.changed("p1", state("Paused", position: 6_000_000), at: at(7)).first else { Issue.record("no update"); return }
        #expect(!u.playing)
        // A new track is a new activity.
        guard case .offer? = m.changed("p1", state("Playing", url: "file:///m/b.ogg"), at: at(8)).first else { Issue.record("no new offer"); return }
    }

    @Test func positionIsExtrapolatedWhilePlayingAndClamped() {
        var m = MediaSource()
        _ = m.changed("p", state("Playing", position: 42_000_000, rate: 1.5), at: at(0))
        #expect(m.position(of: "p", at: at(2)) == 45_000_000)
        m.seeked("p", to: 10_000_000, at: at(3))
        #expect(m.position(of: "p", at: at(3)) == 10_000_000)
        #expect(m.position(of: "p", at: at(1000)) == 100_000_000, "never beyond the length")
        _ = m.changed("p", state("Paused", position: 12_000_000), at: at(5))
        #expect(m.position(of: "p", at: at(50)) == 12_000_000, "paused: it stays")
    }

    @Test func thePlayingPlayerWinsThenTheMostRecent() {
        var m = MediaSource()
        _ = m.changed("a", state("Playing", url: "file:///a"), at: at(0))
        _ = m.changed("b", state("Playing", url: "file:///b"), at: at(1))
        #expect(m.offered?.player == "b", "the one that started last")
        _ = m.changed("b", state("Paused", url: "file:///b"), at: at(2))
        #expect(m.offered?.player == "a", "a plays, b is paused")
        _ = m.changed("a", state("Stopped", url: "file:///a"), at: at(3))
        #expect(m.offered?.player == "b", "nothing plays: the most recent, paused on its track")
        #expect(m.gone("b") == [.withdraw])
        #expect(m.offered == nil)
    }

    @Test func absurdRatesAndPositionsFromAPlayerAreHarmless() {
        var m = MediaSource()
        for rate in [Double.nan, .infinity, -5, 1e300] {
            _ = m.changed("p", state("Playing", position: Int64.max - 1, rate: rate), at: at(0))
            _ = m.position(of: "p", at: at(1e6))  // must not trap
        }
        m.seeked("p", to: Int64.min, at: at(2))
        #expect(m.position(of: "p", at: at(2)) == 0)
    }

    @Test func aPlayerThatNeverPlayedIsNotOffered() {
        var m = MediaSource()
        #expect(m.changed("idle", state("Paused"), at: at(0)).isEmpty)
    }
}
