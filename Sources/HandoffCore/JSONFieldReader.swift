/// Reads typed fields out of a JSON object for request parsing, and reports any field it
/// was never asked for, so a misspelt field is an error instead of silently ignored.
public struct JSONFieldReader {
    public let object: JSONObject
    public let path: String
    private var consumed: Set<String> = []

    public init(_ object: JSONObject, path: String = "") {
        self.object = object
        self.path = path
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func wrongType(_ key: String, _ expected: String, _ got: JSONValue) -> ValidationError {
        ValidationError(field: name(key), problem: "must be \(expected), not \(got.typeName)")
    }

    public mutating func has(_ key: String) -> Bool {
        consumed.insert(key)
        return object[key] != nil
    }

    public mutating func value(_ key: String) -> JSONValue? {
        consumed.insert(key)
        return object[key]
    }

    public mutating func string(_ key: String) throws(ValidationError) -> String? {
        guard let v = value(key), v != .null else { return nil }
        guard case .string(let s) = v else { throw wrongType(key, "a string", v) }
        return s
    }

    public mutating func requiredString(_ key: String) throws(ValidationError) -> String {
        guard let s = try string(key) else { throw ValidationError(field: name(key), problem: "is required") }
        return s
    }

    public mutating func bool(_ key: String) throws(ValidationError) -> Bool? {
        guard let v = value(key), v != .null else { return nil }
        guard case .bool(let b) = v else { throw wrongType(key, "true or false", v) }
        return b
    }

    public mutating func integer(_ key: String) throws(ValidationError) -> Int64? {
        guard let v = value(key), v != .null else { return nil }
        guard case .integer(let i) = v else { throw wrongType(key, "an integer", v) }
        return i
    }

    public mutating func strings(_ key: String) throws(ValidationError) -> [String]? {
        guard let v = value(key), v != .null else { return nil }
        guard case .array(let items) = v else { throw wrongType(key, "an array of strings", v) }
        var out: [String] = []
        for (n, item) in items.enumerated() {
            guard case .string(let s) = item else { throw wrongType("\(key)[\(n)]", "a string", item) }
            out.append(s)
        }
        return out
    }

    public mutating func timestamp(_ key: String) throws(ValidationError) -> Timestamp? {
        guard let s = try string(key) else { return nil }
        guard let t = Timestamp(rfc3339: s) else {
            throw ValidationError(field: name(key), problem: "\"\(s)\" is not an RFC 3339 date such as 2026-11-21T10:00:00Z")
        }
        return t
    }

    public mutating func object(_ key: String) throws(ValidationError) -> JSONObject? {
        guard let v = value(key), v != .null else { return nil }
        guard case .object(let o) = v else { throw wrongType(key, "an object", v) }
        return o
    }

    /// Throws for the first field nobody read.
    public func rejectUnknownFields() throws(ValidationError) {
        if let unknown = object.keys.first(where: { !consumed.contains($0) }) {
            throw ValidationError(field: name(unknown), problem: "unknown field")
        }
    }
}
