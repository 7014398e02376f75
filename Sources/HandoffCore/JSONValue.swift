/// A JSON document as the control API sees it.
///
/// Foundation's JSON types cannot tell `1` from `1.0`, and the activity model must keep
/// integers and doubles apart, so the API parses JSON with this small strict parser
/// (RFC 8259) instead. Objects keep their key order so output reads as it was written.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// An ordered JSON object with unique keys.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public private(set) var pairs: [(key: String, value: JSONValue)] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (k, v) in elements { self[k] = v }
    }

    public var keys: [String] { pairs.map(\.key) }
    public var isEmpty: Bool { pairs.isEmpty }
    public var count: Int { pairs.count }

    public subscript(key: String) -> JSONValue? {
        get { pairs.first(where: { $0.key == key })?.value }
        set {
            if let i = pairs.firstIndex(where: { $0.key == key }) {
                if let newValue { pairs[i].value = newValue } else { pairs.remove(at: i) }
            } else if let newValue {
                pairs.append((key, newValue))
            }
        }
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.pairs.count == b.pairs.count
            && zip(a.pairs, b.pairs).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

extension JSONValue {
    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var integerValue: Int64? { if case .integer(let i) = self { return i } else { return nil } }

    /// A short name of the JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

// MARK: - Serialisation

extension JSONValue {
    /// Compact JSON on one line (what event streams and the wire use).
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    /// Indented JSON for people.
    public func prettySerialized() -> String {
        String(decoding: serializedBytes(pretty: true), as: UTF8.self)
    }

    /// The same text as UTF-8 bytes, for a socket or a file. Written into bytes, not a
    /// String: a state file of 32 activities took 1.5 ms to serialize character by
    /// character, on the path of every become-current (Docs/Performance.md).
    public func serializedBytes(pretty: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out, pretty: pretty, level: 0)
        return out
    }

    private func write(to out: inout [UInt8], pretty: Bool, level: Int) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .integer(let i): out += String(i).utf8
        case .double(let d): out += JSONValue.format(double: d).utf8
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty { out += "[]".utf8; return }
            out.append(UInt8(ascii: "["))
            for (n, item) in items.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { JSONValue.newline(to: &out, level: level + 1) }
                item.write(to: &out, pretty: pretty, level: level + 1)
            }
            if pretty { JSONValue.newline(to: &out, level: level) }
            out.append(UInt8(ascii: "]"))
        case .object(let obj):
            if obj.isEmpty { out += "{}".utf8; return }
            out.append(UInt8(ascii: "{"))
            for (n, pair) in obj.pairs.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { JSONValue.newline(to: &out, level: level + 1) }
                JSONValue.writeString(pair.key, to: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                pair.value.write(to: &out, pretty: pretty, level: level + 1)
            }
            if pretty { JSONValue.newline(to: &out, level: level) }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A line break and two spaces a level.
    private static func newline(to out: inout [UInt8], level: Int) {
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    /// Always has a fraction or exponent, so a reader can tell it from an integer.
    static func format(double d: Double) -> String {
        // Validation rejects non-finite doubles; should one slip through, JSON has no word
        // for it, and null is better than a crash.
        guard d.isFinite else { return "null" }
        var s = "\(d)"  // shortest representation that round-trips
        if !s.contains(".") && !s.contains("e") && !s.contains("E") { s += ".0" }
        return s
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A JSON string: runs of characters that need no escape are copied as they are.
    /// U+2028 and U+2029 are escaped too, since JavaScript treats them as line breaks.
    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            var runStart = 0
            var i = 0
            func flush(upTo end: Int) {
                if end > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<end])) }
            }
            while i < utf8.count {
                let b = utf8[i]
                if b == 0xE2, i + 2 < utf8.count, utf8[i + 1] == 0x80, utf8[i + 2] == 0xA8 || utf8[i + 2] == 0xA9 {
                    flush(upTo: i)
                    out += (utf8[i + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8
                    i += 3
                    runStart = i
                    continue
                }
                guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else { i += 1; continue }
                flush(upTo: i)
                switch b {
                case UInt8(ascii: "\""): out += "\\\"".utf8
                case UInt8(ascii: "\\"): out += "\\\\".utf8
                case 0x0A: out += "\\n".utf8
                case 0x0D: out += "\\r".utf8
                case 0x09: out += "\\t".utf8
                case 0x08: out += "\\b".utf8
                case 0x0C: out += "\\f".utf8
                default:
                    out += "\\u00".utf8
                    out.append(hexDigits[Int(b >> 4)])
                    out.append(hexDigits[Int(b & 0xF)])
                }
                i += 1
                runStart = i
            }
            flush(upTo: i)
        }
        out.append(UInt8(ascii: "\""))
    }
}
