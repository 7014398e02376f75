/// A link's fetches both ways: the requests we sent that wait for an answer (by request
/// id, each with what waits on it), and how many of the peer's we are answering
/// (`PeerSession` caps those). A value; `PeerLink` keeps it under its lock and does what
/// each change returns.
struct FetchRequests<Waiter> {
    private var nextRequest: UInt64 = 1
    private var pending: [UInt64: Waiter] = [:]
    private(set) var closed = false
    /// The peer's fetches we are answering now.
    private(set) var answering = 0

    /// A fetch to send: its request id, or nil once the link is closed (`waiter` is then
    /// told the peer is gone by the caller).
    mutating func open(_ waiter: Waiter) -> UInt64? {
        guard !closed else { return nil }
        defer { nextRequest += 1 }
        pending[nextRequest] = waiter
        return nextRequest
    }

    /// Replaces what waits on a pending request (to add its timer); false if it was answered meanwhile.
    mutating func update(_ request: UInt64, _ waiter: Waiter) -> Bool {
        guard pending[request] != nil else { return false }
        pending[request] = waiter
        return true
    }

    /// The answer (or the timeout) for a request: what waited on it, once; nil for an
    /// unknown or already answered id (a peer may answer late, or twice).
    mutating func resolve(_ request: UInt64) -> Waiter? { pending.removeValue(forKey: request) }

    /// The link closed: every waiter is to be told, and no fetch opens from now on.
    mutating func close() -> [Waiter] {
        closed = true
        defer { pending.removeAll() }
        return pending.sorted { $0.key < $1.key }.map(\.value)
    }

    var waiting: Int { pending.count }

    mutating func beginAnswering() { answering += 1 }

    mutating func endAnswering() { answering = max(0, answering - 1) }
}
extension FetchRequests: Sendable where Waiter: Sendable {}
