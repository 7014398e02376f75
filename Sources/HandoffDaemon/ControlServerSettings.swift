/// Limits that keep the control socket safe from misbehaving clients.
public struct ControlServerSettings: Sendable {
    /// Open connections at once; more are answered 503 and closed.
    public var maximumConnections = 64
    /// Request bodies larger than this are refused with 413 without being read.
    public var maximumBodyBytes = 256 * 1024
    /// A request must arrive whole within this time after its first byte.
    public var requestTimeout: TimeAmountMilliseconds = 10_000
    /// A keep-alive connection with no request in progress is closed after this.
    public var idleTimeout: TimeAmountMilliseconds = 60_000

    public typealias TimeAmountMilliseconds = Int64

    public init() {}
}
