/// Names one copy: 128 random bits as 32 lowercase hex digits, like an activity's id. A
/// new copy gets a new id, so a paste asks for exactly the copy it saw announced.
public struct ClipboardID: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    public init?(_ text: String) {
        guard let id = ActivityID(text) else { return nil }
        rawValue = id.rawValue
    }

    public static func random() -> ClipboardID { ClipboardID(ActivityID.random().rawValue)! }

    public var description: String { rawValue }
}
