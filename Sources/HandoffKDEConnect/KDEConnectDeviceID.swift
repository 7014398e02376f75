/// A KDE Connect device id: 32 to 38 of `[a-zA-Z0-9_-]` (KDE's own rule; CVE-2025-32901: a
/// malformed id crashed the Android app). Anything else is refused where it is read.
public struct KDEConnectDeviceID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init?(_ text: String) {
        let bytes = text.utf8
        guard (32...38).contains(bytes.count), bytes.allSatisfy(Self.allowed) else { return nil }
        rawValue = text
    }

    /// A new id as current KDE Connect makes them: 32 lowercase hex digits (a UUIDv4's
    /// bits, without hyphens).
    public static func random() -> KDEConnectDeviceID {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = Array("0123456789abcdef".utf8)
        let text = String(decoding: bytes.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0x0F)]] }, as: UTF8.self)
        return KDEConnectDeviceID(text)!
    }

    public var description: String { rawValue }

    public static func < (a: KDEConnectDeviceID, b: KDEConnectDeviceID) -> Bool { a.rawValue < b.rawValue }

    private static func allowed(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}
