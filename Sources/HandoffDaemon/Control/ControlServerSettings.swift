/// Limits that keep the control socket safe from misbehaving clients.
public struct ControlServerSettings: Sendable {
    /// Open connections at once; more are answered 503 and closed.
    public var maximumConnections = 64
    /// Request bodies larger than this get 413: refused unread when Content-Length says
    /// so, cut off at the cap when chunked.
    public var maximumBodyBytes = 256 * 1024
    /// A new connection must send a request head within this, and a request whose head
    /// arrived must arrive whole within it.
    public var requestTimeout: TimeAmountMilliseconds = 10_000
    /// A keep-alive connection with no request in progress is closed after this.
    public var idleTimeout: TimeAmountMilliseconds = 60_000

    public typealias TimeAmountMilliseconds = Int64

    public init() {}
}
