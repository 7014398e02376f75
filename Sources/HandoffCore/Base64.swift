/// Standard base64 (RFC 4648 §4, with padding), as the `$data` JSON convention uses.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], UInt8(ascii: "="), UInt8(ascii: "=")]
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Nil unless `text` is canonical padded base64.
    public static func decode(_ text: String) -> [UInt8]? {
        let b = Array(text.utf8)
        guard b.count % 4 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(b.count / 4 * 3)
        var i = 0
        while i < b.count {
            let last = i + 4 == b.count
            var n: UInt32 = 0
            var pad = 0
            for k in 0..<4 {
                let c = b[i + k]
                if c == UInt8(ascii: "=") {
                    guard last, k >= 2 else { return nil }
                    pad += 1
                    n <<= 6
                } else {
                    guard pad == 0 else { return nil }
                    let v = reverse[Int(c)]
                    guard v != 0xFF else { return nil }
                    n = n << 6 | UInt32(v)
                }
            }
            // Canonical only: the bits under the padding must be zero.
            if pad == 1 && n & 0xFF != 0 { return nil }
            if pad == 2 && n & 0xFFFF != 0 { return nil }
            out.append(UInt8(n >> 16 & 0xFF))
            if pad < 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if pad < 1 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }
}

extension Sequence where Element == UInt8 {
    /// Lowercase hex, two digits a byte (digests in messages and logs).
    public var hexString: String {
        let digits = Array("0123456789abcdef")
        var out = ""
        for b in self { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0x0f)]) }
        return out
    }
}

extension Array where Element == UInt8 {
    /// The bytes of `hexString`'s form (lowercase, two digits a byte); nil for anything else.
    public init?(lowercaseHex text: String) {
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            default: nil
            }
        }
        let chars = Array<UInt8>(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        self = out
    }
}
