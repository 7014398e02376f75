import NIOConcurrencyHelpers

/// Counts peer connections, so that unauthenticated ones (before the hello) and all of
/// them stay under their caps whatever strangers on the network do.
final class PeerConnectionCounter: Sendable {
    private let counts = NIOLockedValueBox((unauthenticated: 0, total: 0))
    let maximumUnauthenticated: Int
    let maximumTotal: Int

    init(maximumUnauthenticated: Int, maximumTotal: Int) {
        self.maximumUnauthenticated = maximumUnauthenticated
        self.maximumTotal = maximumTotal
    }

    /// False when either cap is reached.
    func admit() -> Bool {
        counts.withLockedValue { c in
            guard c.unauthenticated < maximumUnauthenticated, c.total < maximumTotal else { return false }
            c.unauthenticated += 1
            c.total += 1
            return true
        }
    }

    func authenticated() { counts.withLockedValue { $0.unauthenticated -= 1 } }

    func closed(wasAuthenticated: Bool) {
        counts.withLockedValue { c in
            c.total -= 1
            if !wasAuthenticated { c.unauthenticated -= 1 }
        }
    }
}
