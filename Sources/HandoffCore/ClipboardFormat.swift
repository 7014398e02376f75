/// One form a copy can be pasted in: a MIME type (`text/plain;charset=utf-8`, `image/png`,
/// `text/uri-list`) and its size in bytes when known. (An X11 clipboard says its types but
/// not their sizes without handing over the data, which is read only when pasted.)
public struct ClipboardFormat: Sendable, Equatable {
    public var type: String
    public var size: Int64?

    public init(type: String, size: Int64?) {
        self.type = type
        self.size = size
    }

    /// The longest type with its parameters: RFC 6838 allows 127 characters each for the
    /// type and the subtype; parameters such as `charset=utf-8` fit in what is left.
    public static let maximumTypeBytes = 255

    /// A MIME type as RFC 6838 restricts its names (`type/subtype`, letters, digits and
    /// `!#$&^_.+-`), optionally with `;name=value` parameters of the same characters.
    /// Anything else (spaces, quotes, control characters, X11 atom names such as
    /// `UTF8_STRING`) is not a type to announce or ask for.
    public static func isValidType(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumTypeBytes else { return false }
        func isNameByte(_ b: UInt8) -> Bool {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "^"), UInt8(ascii: "_"),
                 UInt8(ascii: "."), UInt8(ascii: "+"), UInt8(ascii: "-"): true
            default: false
            }
        }
        let parts = bytes.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        let main = parts[0].split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        func isAlphanumeric(_ b: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
        }
        // restricted-name = restricted-name-first *126restricted-name-chars (RFC 6838 §4.2)
        guard main.count == 2, main.allSatisfy({ !$0.isEmpty && $0.count <= 127 && $0.allSatisfy(isNameByte) && isAlphanumeric($0.first!) }) else {
            return false
        }
        for parameter in parts.dropFirst() {
            let kv = parameter.split(separator: UInt8(ascii: "="), omittingEmptySubsequences: false)
            guard kv.count == 2, kv.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isNameByte) }) else { return false }
        }
        return true
    }
}
