/// The compact binary encoding of property values, used on the wire between workstations
/// and to measure an activity's payload size. Layout (Docs/PeerProtocol.md):
///
///     value   = tag:u8 body
///     0x00 null      0x01 false     0x02 true
///     0x03 integer   zigzag varint
///     0x04 double    8 bytes, IEEE 754 big-endian
///     0x05 string    varint length, UTF-8
///     0x06 data      varint length, bytes
///     0x07 date      zigzag varint seconds since 1970, varint nanoseconds
///     0x08 url       varint length, UTF-8
///     0x09 array     varint count, values
///     0x0A dict      varint count, (varint length, UTF-8 key, value)...  keys sorted, unique
///     0x0B set       varint count, values
///
/// Varints are unsigned LEB128 of at most 10 bytes.
public enum PropertyBinaryEncoding {
    public static let maximumDepth = 64

    public static func encode(_ value: PropertyValue) -> [UInt8] {
        var w = BinaryWriter()
        w.write(value)
        return w.bytes
    }

    public static func decode(_ bytes: [UInt8]) throws(BinaryDecodingError) -> PropertyValue {
        var r = BinaryReader(bytes: bytes)
        let v = try r.readValue()
        guard r.isAtEnd else { throw BinaryDecodingError(message: "trailing bytes after the value", offset: r.offset) }
        return v
    }
}

public struct BinaryDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var offset: Int
    public var description: String { "malformed binary value at byte \(offset): \(message)" }
}

public struct BinaryWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func writeVarint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    public mutating func writeZigzag(_ v: Int64) {
        writeVarint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    public mutating func writeBytes(_ b: [UInt8]) {
        writeVarint(UInt64(b.count))
        bytes += b
    }

    public mutating func writeString(_ s: String) { writeBytes(Array(s.utf8)) }

    public mutating func write(_ value: PropertyValue) {
        switch value {
        case .null: bytes.append(0x00)
        case .boolean(let b): bytes.append(b ? 0x02 : 0x01)
        case .integer(let i): bytes.append(0x03); writeZigzag(i)
        case .double(let d):
            bytes.append(0x04)
            let bits = d.bitPattern
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        case .string(let s): bytes.append(0x05); writeString(s)
        case .data(let d): bytes.append(0x06); writeBytes(d)
        case .date(let t): bytes.append(0x07); writeZigzag(t.seconds); writeVarint(UInt64(t.nanoseconds))
        case .url(let u): bytes.append(0x08); writeString(u)
        case .array(let items):
            bytes.append(0x09)
            writeVarint(UInt64(items.count))
            for item in items { write(item) }
        case .dictionary(let dict):
            bytes.append(0x0A)
            writeVarint(UInt64(dict.count))
            for key in dict.keys.sorted() {
                writeString(key)
                write(dict[key]!)
            }
        case .set(let items):
            bytes.append(0x0B)
            writeVarint(UInt64(items.count))
            for item in items { write(item) }
        }
    }
}

/// Reads what `BinaryWriter` wrote; every length and count is checked against the bytes
/// that remain, so a hostile input cannot make it allocate more than its own size.
public struct BinaryReader {
    let bytes: [UInt8]
    public private(set) var offset = 0

    public init(bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { offset == bytes.count }

    func fail(_ m: String) -> BinaryDecodingError { BinaryDecodingError(message: m, offset: offset) }

    public mutating func readByte() throws(BinaryDecodingError) -> UInt8 {
        guard offset < bytes.count else { throw fail("unexpected end of data") }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readVarint() throws(BinaryDecodingError) -> UInt64 {
        var result: UInt64 = 0
        for i in 0..<10 {
            let b = try readByte()
            if i == 9 && b > 1 { throw fail("varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << UInt64(7 * i)
            if b & 0x80 == 0 { return result }
        }
        throw fail("varint longer than 10 bytes")
    }

    public mutating func readZigzag() throws(BinaryDecodingError) -> Int64 {
        let u = try readVarint()
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    /// A count of things that each take at least one byte.
    mutating func readCount() throws(BinaryDecodingError) -> Int {
        let n = try readVarint()
        guard n <= UInt64(bytes.count - offset) else { throw fail("count \(n) exceeds the remaining data") }
        return Int(n)
    }

    public mutating func readBytes() throws(BinaryDecodingError) -> [UInt8] {
        let n = try readCount()
        defer { offset += n }
        return Array(bytes[offset..<offset + n])
    }

    public mutating func readString() throws(BinaryDecodingError) -> String {
        let start = offset
        let raw = try readBytes()
        guard let s = String(validating: raw, as: UTF8.self) else {
            throw BinaryDecodingError(message: "string is not valid UTF-8", offset: start)
        }
        return s
    }

    public mutating func readValue(depth: Int = 0) throws(BinaryDecodingError) -> PropertyValue {
        guard depth < PropertyBinaryEncoding.maximumDepth else { throw fail("nested too deeply") }
        let tag = try readByte()
        switch tag {
        case 0x00: return .null
        case 0x01: return .boolean(false)
        case 0x02: return .boolean(true)
        case 0x03: return .integer(try readZigzag())
        case 0x04:
            guard bytes.count - offset >= 8 else { throw fail("truncated double") }
            var bits: UInt64 = 0
            for _ in 0..<8 { bits = bits << 8 | UInt64(try readByte()) }
            return .double(Double(bitPattern: bits))
        case 0x05: return .string(try readString())
        case 0x06: return .data(try readBytes())
        case 0x07:
            let s = try readZigzag()
            let n = try readVarint()
            guard let t = Timestamp(validatingSeconds: s, nanoseconds: Int64(clamping: n)) else {
                throw fail("date out of range (years 0000 to 9999, nanoseconds below 10^9)")
            }
            return .date(t)
        case 0x08: return .url(try readString())
        case 0x09, 0x0B:
            let n = try readCount()
            var items: [PropertyValue] = []
            items.reserveCapacity(n)
            for _ in 0..<n { items.append(try readValue(depth: depth + 1)) }
            return tag == 0x09 ? .array(items) : .set(items)
        case 0x0A:
            let n = try readCount()
            var dict: UserInfo = [:]
            for _ in 0..<n {
                let key = try readString()
                guard dict[key] == nil else { throw fail("duplicate dictionary key \"\(key)\"") }
                dict[key] = try readValue(depth: depth + 1)
            }
            return .dictionary(dict)
        default:
            throw BinaryDecodingError(message: "unknown value tag 0x\(String(tag, radix: 16))", offset: offset - 1)
        }
    }
}
