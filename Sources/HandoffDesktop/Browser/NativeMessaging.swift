/// The WebExtension native-messaging framing on the host's stdin and stdout: each message
/// is a 32-bit length in native byte order, then that many bytes of UTF-8 JSON. Browsers
/// send up to 4 GB and accept at most 1 MB; this host takes at most `maximumInbound`
/// (a tab's URL and title need a few KB) and says why when a frame breaks the rules.
public struct NativeMessageDecoder: Sendable {
    public static let maximumOutbound = 1 << 20

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case notJSON
        case truncated(Int)

        public var description: String {
            switch self {
            case .tooLarge(let n): "a message of \(n) bytes is over the host's limit"
            case .notJSON: "a message is not a JSON object"
            case .truncated(let n): "the input ended \(n) bytes into a message"
            }
        }
    }

    public let maximumInbound: Int
    private var buffer: [UInt8] = []

    public init(maximumInbound: Int = 1 << 20) {
        self.maximumInbound = maximumInbound
    }

    /// Adds bytes; returns the whole messages they complete, as JSON text.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(Failure) -> [String] {
        buffer.append(contentsOf: bytes)
        var out: [String] = []
        while buffer.count >= 4 {
            let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })  // native order
            guard length <= maximumInbound else { throw .tooLarge(length) }
            guard buffer.count >= 4 + length else { break }
            let body = Array(buffer[4..<(4 + length)])
            buffer.removeFirst(4 + length)
            guard let text = String(validating: body, as: UTF8.self), text.first(where: { !$0.isWhitespace }) == "{" else { throw .notJSON }
            out.append(text)
        }
        return out
    }

    /// The input ended: fine between messages, an error inside one.
    public func finish() throws(Failure) {
        if !buffer.isEmpty { throw .truncated(buffer.count) }
    }

    /// One message for the browser; nil if it would be over the browser's 1 MB limit.
    public static func encode(_ json: String) -> [UInt8]? {
        let body = Array(json.utf8)
        guard body.count <= maximumOutbound else { return nil }
        return withUnsafeBytes(of: UInt32(body.count), Array.init) + body
    }
}
