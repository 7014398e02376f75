/// A device's identity: the SHA-256 of its certificate (DER), shown and typed the way
/// Syncthing shows and types device IDs, so the text is familiar and interchangeable.
///
/// The hash itself is computed elsewhere; this type only formats and parses the 32 bytes.
///
/// Text form (compatible with Syncthing's `lib/protocol/deviceid.go`):
/// - the 32 bytes in RFC 4648 base32 (`A`–`Z`, `2`–`7`), unpadded: 52 characters;
/// - split into 4 groups of 13, each followed by its check character (Syncthing's
///   `luhn32`, reimplemented in `checkValue(_:)`): 56 characters;
/// - printed as 8 chunks of 7 joined by `-`, e.g.
///   `MFZWI3D-BONSGYC-YLTMRWG-C43ENR5-QXGZDMM-FZWI3DP-BONSGYY-LTMRWAD`.
///
/// Each group of 13 plus its check character is exactly two chunks, so the check characters
/// are the last characters of chunks 2, 4, 6 and 8.
public struct DeviceID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number of bytes in a device ID (a SHA-256 digest).
    public static let byteCount = 32

    /// The 32 bytes of the certificate's SHA-256.
    public let bytes: [UInt8]

    /// Wraps a SHA-256 digest. `bytes` must hold exactly 32 bytes.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a device ID is \(Self.byteCount) bytes, not \(bytes.count)")
        self.bytes = bytes
    }

    /// Parses a device ID as people type it.
    ///
    /// Lenient like Syncthing: dashes and spaces anywhere are ignored, lower case is
    /// accepted, and the characters outside the alphabet that people type by mistake are
    /// read as the letters they resemble (`0` as `O`, `1` as `I`, `8` as `B`). Accepts the
    /// 56-character form with check characters (each is verified) or the older 52-character
    /// form without them.
    ///
    /// Stricter than Syncthing in three ways, each with a clear error: the empty string is
    /// not an ID (Syncthing reads it as its all-zero "empty" ID); only ASCII is accepted
    /// (Go's `strings.ToUpper` would also turn `ı` into `I` and `ſ` into `S`); and the last
    /// base32 character must be canonical, i.e. its 4 padding bits zero (Go's base32 decoder
    /// ignores them), so every ID has exactly one text form.
    public init(parsing text: String) throws(DeviceIDError) {
        // The significant characters' 5-bit values, and their 1-based positions in `text`.
        var values: [UInt8] = []
        var positions: [Int] = []
        var typed: [Character] = []
        values.reserveCapacity(56)
        positions.reserveCapacity(56)
        typed.reserveCapacity(56)
        var position = 0
        for character in text {
            position += 1
            if character == "-" || character == " " { continue }
            guard let value = Self.value(of: character) else {
                throw DeviceIDError(.invalidCharacter(character, position: position))
            }
            values.append(value)
            positions.append(position)
            typed.append(character)
        }

        let data: [UInt8]
        switch values.count {
        case 56:
            data = try Self.removingCheckCharacters(values, positions: positions)
        case 52:
            data = values
        default:
            throw DeviceIDError(.wrongLength(values.count))
        }

        // 52 characters carry 260 bits: 256 of data and 4 that must be zero.
        guard data[51] & 0x0F == 0 else {
            let index = values.count == 56 ? 54 : 51  // before the last check character, if any
            throw DeviceIDError(.nonCanonicalLastCharacter(typed[index], position: positions[index]))
        }
        self.bytes = Self.base32Decode(data)
    }

    /// The canonical text: 56 characters in 8 dashed chunks of 7.
    public var description: String {
        let data = Self.base32Encode(bytes)  // 52 values
        var out: [UInt8] = []
        out.reserveCapacity(63)
        var count = 0
        func emit(_ value: UInt8) {
            if count > 0 && count % 7 == 0 { out.append(UInt8(ascii: "-")) }
            out.append(Self.alphabet[Int(value)])
            count += 1
        }
        for group in 0..<4 {
            let slice = data[group * 13..<(group + 1) * 13]
            for value in slice { emit(value) }
            emit(Self.checkValue(slice))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The first chunk (7 characters) of ``description``, for compact display; the same as
    /// Syncthing's `ShortID.String()` (the first 35 bits, in base32).
    public var shortID: String {
        let data = Self.base32Encode(Array(bytes.prefix(5)))  // 8 values, the first 7 exact
        return String(decoding: data.prefix(7).map { Self.alphabet[Int($0)] }, as: UTF8.self)
    }

    /// Byte-wise lexicographic order (as Syncthing's `DeviceID.Compare`), used to break ties
    /// between two connections to the same peer.
    public static func < (a: DeviceID, b: DeviceID) -> Bool {
        a.bytes.lexicographicallyPrecedes(b.bytes)
    }

    // MARK: - Base32 and check characters

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The 5-bit value a typed character stands for, or nil if it stands for none.
    static func value(of character: Character) -> UInt8? {
        guard let ascii = character.asciiValue else { return nil }
        switch ascii {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return ascii - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return ascii - UInt8(ascii: "a")
        case UInt8(ascii: "2")...UInt8(ascii: "7"): return ascii - UInt8(ascii: "2") + 26
        // Syncthing's untypeoify: digits that look like letters.
        case UInt8(ascii: "0"): return UInt8(ascii: "O") - UInt8(ascii: "A")
        case UInt8(ascii: "1"): return UInt8(ascii: "I") - UInt8(ascii: "A")
        case UInt8(ascii: "8"): return UInt8(ascii: "B") - UInt8(ascii: "A")
        default: return nil
        }
    }

    /// The check character's value for a group of base32 values.
    ///
    /// Matches Syncthing's `luhn32` in `lib/protocol/luhn.go` (used by `luhnify` and
    /// `unluhnify` in `lib/protocol/deviceid.go`), including its historic departure from
    /// Luhn mod N: the factor starts at 1 on the *first* (leftmost) character and alternates
    /// 1, 2, 1, 2, … left to right, where the real algorithm doubles starting from the
    /// rightmost character. Each product is folded as `p / 32 + p % 32`, and the check
    /// value is `(32 - sum % 32) % 32`. Syncthing kept this for compatibility (see
    /// https://forum.syncthing.net/t/v0-9-0-new-node-id-format/478), and so do we.
    static func checkValue(_ group: some Sequence<UInt8>) -> UInt8 {
        var factor = 1
        var sum = 0
        for value in group {
            let product = factor * Int(value)
            factor = factor == 1 ? 2 : 1
            sum += product / 32 + product % 32
        }
        return UInt8((32 - sum % 32) % 32)
    }

    /// Verifies and strips the four check characters of a 56-value ID.
    static func removingCheckCharacters(_ values: [UInt8], positions: [Int]) throws(DeviceIDError) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(52)
        for group in 0..<4 {
            let start = group * 14
            let slice = values[start..<start + 13]
            guard checkValue(slice) == values[start + 13] else {
                throw DeviceIDError(
                    .checkCharacterMismatch(group: group + 1, positions: positions[start]...positions[start + 13]))
            }
            data += slice
        }
        return data
    }

    /// Unpadded base32 values (0–31) of `bytes`; the last value's spare low bits are zero.
    static func base32Encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(UInt8(buffer >> UInt32(bits) & 31))
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { out.append(UInt8(buffer << UInt32(5 - bits) & 31)) }
        return out
    }

    /// Bytes of unpadded base32 values; leftover bits (fewer than 8) are dropped.
    static func base32Decode(_ values: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 5 / 8)
        var buffer: UInt32 = 0
        var bits = 0
        for value in values {
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(buffer >> UInt32(bits) & 0xFF))
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        return out
    }
}

/// Why a text is not a device ID.
public struct DeviceIDError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// The number of significant characters (dashes and spaces not counted) is neither
        /// 56 nor 52.
        case wrongLength(Int)
        /// A character outside the base32 alphabet (after the lenient fixes), at a 1-based
        /// position in the text as given.
        case invalidCharacter(Character, position: Int)
        /// Group 1–4's check character does not match its 13 characters: the ID is
        /// mistyped somewhere in `positions` (1-based, in the text as given).
        case checkCharacterMismatch(group: Int, positions: ClosedRange<Int>)
        /// The last base32 character has non-zero padding bits (only `A` and `Q` can end an
        /// ID's data), so it cannot come from a real ID.
        case nonCanonicalLastCharacter(Character, position: Int)
    }

    public let kind: Kind

    public init(_ kind: Kind) { self.kind = kind }

    public var description: String {
        switch kind {
        case .wrongLength(let count):
            return "device ID has the wrong length: \(count) characters (not counting dashes and spaces), "
                + "expected 56, or 52 without check characters"
        case .invalidCharacter(let character, let position):
            return "device ID has an invalid character \(Self.quoted(character)) at position \(position); "
                + "only A-Z and 2-7 are allowed (and dashes or spaces between them)"
        case .checkCharacterMismatch(let group, let positions):
            return "device ID is mistyped: check character mismatch in group \(group) of 4 "
                + "(characters \(positions.lowerBound)-\(positions.upperBound))"
        case .nonCanonicalLastCharacter(let character, let position):
            return "device ID is mistyped: \(Self.quoted(character)) at position \(position) "
                + "cannot be the last character of an ID's data (only A or Q can)"
        }
    }

    private static func quoted(_ character: Character) -> String {
        String(reflecting: String(character))
    }
}
