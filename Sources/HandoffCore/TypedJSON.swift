/// The typed-JSON convention for property values (Docs/LocalAPI.md):
/// JSON scalars, arrays and objects stand for themselves; the other types are single-key
/// tagged objects: `{"$data": base64}`, `{"$date": RFC 3339}`, `{"$url": "..."}`,
/// `{"$set": [...]}`. A plain object whose only key starts with `$` would be ambiguous, so
/// keys starting with `$` are escaped by doubling the dollar: `{"$$price": 3}` is the
/// dictionary `["$price": 3]`.
public enum TypedJSON {
    public static func encode(_ value: PropertyValue) -> JSONValue {
        switch value {
        case .string(let s): return .string(s)
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .boolean(let b): return .bool(b)
        case .null: return .null
        case .data(let bytes): return .object(["$data": .string(Base64.encode(bytes))])
        case .date(let t): return .object(["$date": .string(t.rfc3339)])
        case .url(let u): return .object(["$url": .string(u)])
        case .set(let items): return .object(["$set": .array(items.map(encode))])
        case .array(let items): return .array(items.map(encode))
        case .dictionary(let dict): return .object(encode(dictionary: dict))
        }
    }

    /// Keys sorted, so the same userInfo always prints the same way.
    public static func encode(dictionary dict: UserInfo) -> JSONObject {
        var obj = JSONObject()
        for key in dict.keys.sorted() {
            obj[key.hasPrefix("$") ? "$" + key : key] = encode(dict[key]!)
        }
        return obj
    }

    /// `path` names where the value sits (e.g. `userInfo.position`) for error messages.
    public static func decode(_ json: JSONValue, path: String) throws(ValidationError) -> PropertyValue {
        switch json {
        case .null: return .null
        case .bool(let b): return .boolean(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let items):
            var out: [PropertyValue] = []
            out.reserveCapacity(items.count)
            for (n, item) in items.enumerated() { out.append(try decode(item, path: "\(path)[\(n)]")) }
            return .array(out)
        case .object(let obj):
            if obj.count == 1, let tag = obj.keys.first, tag.hasPrefix("$"), !tag.hasPrefix("$$") {
                return try decodeTagged(tag: tag, obj[tag]!, path: path)
            }
            return .dictionary(try decode(dictionary: obj, path: path))
        }
    }

    public static func decode(dictionary obj: JSONObject, path: String) throws(ValidationError) -> UserInfo {
        var dict: UserInfo = [:]
        for (key, value) in obj.pairs {
            let realKey: String
            if key.hasPrefix("$$") {
                realKey = String(key.dropFirst())
            } else if key.hasPrefix("$") {
                throw ValidationError(field: "\(path).\(key)", problem: "unknown type tag \"\(key)\" (tags are $data, $date, $url, $set, and a tagged object has exactly one key; write a key starting with $ as $$)")
            } else {
                realKey = key
            }
            if dict[realKey] != nil { throw ValidationError(field: "\(path).\(key)", problem: "key appears twice") }
            dict[realKey] = try decode(value, path: "\(path).\(realKey)")
        }
        return dict
    }

    static func decodeTagged(tag: String, _ body: JSONValue, path: String) throws(ValidationError) -> PropertyValue {
        switch tag {
        case "$data":
            guard case .string(let s) = body, let bytes = Base64.decode(s) else {
                throw ValidationError(field: path, problem: "$data must be a base64 string (RFC 4648, padded)")
            }
            return .data(bytes)
        case "$date":
            guard case .string(let s) = body, let t = Timestamp(rfc3339: s) else {
                throw ValidationError(field: path, problem: "$date must be an RFC 3339 string such as 2026-11-21T10:00:00.250Z (at most 9 fraction digits)")
            }
            return .date(t)
        case "$url":
            guard case .string(let s) = body else {
                throw ValidationError(field: path, problem: "$url must be a string")
            }
            return .url(s)
        case "$set":
            guard case .array(let items) = body else {
                throw ValidationError(field: path, problem: "$set must be an array")
            }
            var out: [PropertyValue] = []
            for (n, item) in items.enumerated() { out.append(try decode(item, path: "\(path)[\(n)]")) }
            return .set(out)
        default:
            throw ValidationError(field: path, problem: "unknown type tag \"\(tag)\" (known: $data, $date, $url, $set; write a key starting with $ as $$)")
        }
    }
}
