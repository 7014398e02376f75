#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where decisions get the time: the real clock in the daemon, a manual one in tests, so
/// what depends on time (expiry, deadlines, backoff) is tested without waiting.
public protocol WallClock: Sendable {
    func now() -> Timestamp
}

/// The real-time clock, for activity times and expiry (daemon and clients alike).
public struct SystemClock: WallClock {
    public init() {}

    public func now() -> Timestamp { Self.now() }

    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(seconds: Int64(ts.tv_sec), nanoseconds: Int32(ts.tv_nsec))
    }
}
