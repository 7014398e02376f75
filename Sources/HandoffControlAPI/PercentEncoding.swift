/// Percent-encoding of a query parameter's value (RFC 3986): what the control API's
/// stream request carries a file path in. Bytes, not characters: a path is bytes.
public enum PercentEncoding {
    /// Unreserved characters and `/` stay; every other byte becomes `%XX`.
    public static func encode(_ text: String) -> String {
        var out = ""
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "%" + String(b >> 4, radix: 16, uppercase: true) + String(b & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// Nil for a `%` not followed by two hex digits, or bytes that are not UTF-8.
    public static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var i = text.utf8.startIndex
        let u = text.utf8
        while i < u.endIndex {
            let b = u[i]
            if b == UInt8(ascii: "%") {
                let h = u.index(after: i)
                guard h < u.endIndex, u.index(after: h) < u.endIndex,
                      let hi = hexValue(u[h]), let lo = hexValue(u[u.index(after: h)]) else { return nil }
                bytes.append(hi << 4 | lo)
                i = u.index(h, offsetBy: 2)
            } else {
                bytes.append(b)
                i = u.index(after: i)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
