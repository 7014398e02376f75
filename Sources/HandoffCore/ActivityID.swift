/// The daemon-assigned identity of an activity: 128 random bits as 32 lower-case hex digits.
public struct ActivityID: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    public init?(_ text: String) {
        let t = text.lowercased()
        guard t.utf8.count == 32, t.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        rawValue = t
    }

    public static func random() -> ActivityID {
        var g = SystemRandomNumberGenerator()
        let hex = (0..<2).map { _ -> String in
            let s = String(g.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }.joined()
        return ActivityID(hex)!
    }

    public var description: String { rawValue }
}
