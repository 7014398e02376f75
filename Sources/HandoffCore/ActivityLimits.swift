/// Bounds an activity must stay within. The payload cap is configurable (handoffd
/// `--max-activity-bytes`); Apple advises 3 KB or less, and so do we.
public struct ActivityLimits: Sendable, Equatable {
    /// Cap on the encoded activity (binary encoding, Docs/PeerProtocol.md).
    public var maximumEncodedBytes: Int
    public var maximumTypeLength = 255
    public var maximumTitleLength = 1024
    public var maximumKeywords = 64
    public var maximumKeywordLength = 256
    public var maximumURLLength = 8192
    public var maximumNesting = 32
    /// `persistentIdentifier` and `targetContentIdentifier`, in UTF-8 bytes.
    public var maximumIdentifierLength = 256
    public var maximumDescriptionLength = 4096
    /// A thumbnail's bytes: it travels in the payload, so it stays small.
    public var maximumThumbnailBytes = 32 * 1024

    public static let defaultMaximumEncodedBytes = 64 * 1024
    public static let recommendedEncodedBytes = 3 * 1024
    /// Persistent identifiers one request to forget saved activities names at most (the
    /// local API's and the peer protocol's `forgetHistory`).
    public static let maximumForgottenIdentifiers = 1024

    public init(maximumEncodedBytes: Int = ActivityLimits.defaultMaximumEncodedBytes) {
        self.maximumEncodedBytes = maximumEncodedBytes
    }
}
