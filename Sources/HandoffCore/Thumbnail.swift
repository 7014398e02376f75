/// What a thumbnail may hold: PNG or JPEG, known by their first bytes. Nothing decodes
/// it here; whoever shows it does, as it would any image from the network.
public enum Thumbnail {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF]

    public static func isImage(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: png) || bytes.starts(with: jpeg)
    }

    /// The MIME type it is served as.
    public static func mediaType(_ bytes: [UInt8]) -> String? {
        bytes.starts(with: png) ? "image/png" : bytes.starts(with: jpeg) ? "image/jpeg" : nil
    }
}
