/// One value of an activity's `userInfo`: the property-list types of NSUserActivity,
/// plus null. Integers and doubles are distinct, and dates keep nanoseconds, so every
/// value survives the JSON and binary encodings unchanged.
public enum PropertyValue: Sendable, Hashable {
    // Not `indirect`: arrays and dictionaries hold their elements on the heap already, so
    // scalars stay inline (no box each), and LeakSanitizer sees every pointer (it cannot
    // read a box's address with the case tagged into its spare bits, llvm/llvm-project#56751).
    case string(String)
    case integer(Int64)
    case double(Double)
    case boolean(Bool)
    case data([UInt8])
    case date(Timestamp)
    case url(String)
    case array([PropertyValue])
    case dictionary([String: PropertyValue])
    /// Elements are unique; order is kept as given so encodings are stable.
    case set([PropertyValue])
    case null

    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .double: "double"
        case .boolean: "boolean"
        case .data: "data"
        case .date: "date"
        case .url: "url"
        case .array: "array"
        case .dictionary: "dictionary"
        case .set: "set"
        case .null: "null"
        }
    }
}

/// An activity's userInfo: string keys to property values.
public typealias UserInfo = [String: PropertyValue]
