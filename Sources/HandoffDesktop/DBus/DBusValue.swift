import CGIO

/// A D-Bus value as Swift holds it: what the agent's exported objects answer and what
/// callers send them. It becomes a GVariant only on the GLib thread (`gvariant`), and a
/// GVariant from a caller becomes one (`init(_:)`) before anything looks at it.
public enum DBusValue: Sendable, Equatable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    /// `v`: the boxed value (one element; an array keeps the enum free of `indirect`).
    case variantBox([DBusValue])
    case bytes([UInt8])
    /// `aT`: the element's signature, so an empty array still has its type.
    case array(String, [DBusValue])
    case tuple([DBusValue])
    /// `a{sv}`, in order.
    case dictionary([DBusEntry])

    public static func variant(_ v: DBusValue) -> DBusValue { .variantBox([v]) }

    /// `a{sv}` from pairs.
    public static func dict(_ pairs: KeyValuePairs<String, DBusValue>) -> DBusValue {
        .dictionary(pairs.map { DBusEntry($0.key, $0.value) })
    }

    /// The D-Bus signature.
    public var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .bool: "b"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .variantBox: "v"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .tuple(let items): "(" + items.map(\.signature).joined() + ")"
        case .dictionary: "a{sv}"
        }
    }

    // MARK: - Reading what a caller sent

    public var string: String? {
        switch self {
        case .string(let s), .objectPath(let s): s
        default: nil
        }
    }

    public var int: Int64? {
        switch self {
        case .int32(let i): Int64(i)
        case .uint32(let u): Int64(u)
        case .int64(let i): i
        case .uint64(let u): u <= UInt64(Int64.max) ? Int64(u) : nil
        default: nil
        }
    }

    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    public var items: [DBusValue] {
        switch self {
        case .array(_, let items), .tuple(let items): items
        default: []
        }
    }

    public var strings: [String] { items.compactMap(\.string) }

    public var unboxed: DBusValue { if case .variantBox(let inner) = self, let first = inner.first { first } else { self } }

    /// A key of an `a{sv}`, unboxed.
    public subscript(key: String) -> DBusValue? {
        guard case .dictionary(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value.unboxed
    }
}

/// One entry of an `a{sv}`.
public struct DBusEntry: Sendable, Equatable {
    public var key: String
    public var value: DBusValue
    public init(_ key: String, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

// MARK: - GVariant (GLib thread only)

extension DBusValue {
    /// A new floating GVariant (whoever takes it sinks it: a container, a reply, a signal).
    /// Object paths that are not valid become "/" rather than a GLib critical.
    func gvariant() -> OpaquePointer {
        switch self {
        case .string(let s): return g_variant_new_string(s)
        case .objectPath(let p): return g_variant_is_object_path(p) != 0 ? g_variant_new_object_path(p) : g_variant_new_object_path("/")
        case .bool(let b): return g_variant_new_boolean(b ? 1 : 0)
        case .int32(let i): return g_variant_new_int32(i)
        case .uint32(let u): return g_variant_new_uint32(u)
        case .int64(let i): return g_variant_new_int64(gint64(i))
        case .uint64(let u): return g_variant_new_uint64(guint64(u))
        case .double(let d): return g_variant_new_double(d)
        case .variantBox(let inner): return g_variant_new_variant((inner.first ?? .tuple([])).gvariant())
        case .bytes(let b):
            return DBusValue.withType("y") { t in b.withUnsafeBytes { g_variant_new_fixed_array(t, $0.baseAddress, gsize(b.count), 1) } }
        case .array(let element, let items):
            let children: [OpaquePointer?] = items.map { $0.gvariant() }
            return DBusValue.withType(element) { t in children.withUnsafeBufferPointer { g_variant_new_array(t, $0.baseAddress, gsize(children.count)) } }
        case .tuple(let items):
            let children: [OpaquePointer?] = items.map { $0.gvariant() }
            return children.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, gsize(children.count)) }
        case .dictionary(let entries):
            let children: [OpaquePointer?] = entries.map { g_variant_new_dict_entry(g_variant_new_string($0.key), g_variant_new_variant($0.value.gvariant())) }
            return DBusValue.withType("{sv}") { t in children.withUnsafeBufferPointer { g_variant_new_array(t, $0.baseAddress, gsize(children.count)) } }
        }
    }

    private static func withType<T>(_ signature: String, _ body: (OpaquePointer?) -> T) -> T {
        let t = g_variant_type_new(signature)
        defer { g_variant_type_free(t) }
        return body(t)
    }

    /// What a GVariant holds (GDBus checked it against the interface's signature already).
    init(_ v: OpaquePointer) {
        let type = String(cString: g_variant_get_type_string(v))
        switch type.first {
        case "s", "g": self = .string(String(cString: g_variant_get_string(v, nil)))
        case "o": self = .objectPath(String(cString: g_variant_get_string(v, nil)))
        case "b": self = .bool(g_variant_get_boolean(v) != 0)
        case "y": self = .uint32(UInt32(g_variant_get_byte(v)))
        case "n": self = .int32(Int32(g_variant_get_int16(v)))
        case "q": self = .uint32(UInt32(g_variant_get_uint16(v)))
        case "i": self = .int32(g_variant_get_int32(v))
        case "h": self = .int32(g_variant_get_handle(v))
        case "u": self = .uint32(g_variant_get_uint32(v))
        case "x": self = .int64(Int64(g_variant_get_int64(v)))
        case "t": self = .uint64(UInt64(g_variant_get_uint64(v)))
        case "d": self = .double(g_variant_get_double(v))
        case "v":
            let inner = g_variant_get_variant(v)!
            defer { g_variant_unref(inner) }
            self = .variant(DBusValue(inner))
        case "a" where type == "ay":
            var n: gsize = 0
            let p = g_variant_get_fixed_array(v, &n, 1)
            self = .bytes(n > 0 && p != nil ? Array(UnsafeRawBufferPointer(start: p, count: Int(n))) : [])
        case "a" where type == "a{sv}":
            self = .dictionary(DBusValue.children(v).compactMap { entry in
                guard case .tuple(let kv) = entry, kv.count == 2, let key = kv[0].string else { return nil }
                return DBusEntry(key, kv[1].unboxed)
            })
        case "a":
            self = .array(String(type.dropFirst()), DBusValue.children(v))
        case "(", "{":
            self = .tuple(DBusValue.children(v))
        default:
            // Maybe types do not cross D-Bus.
            self = .tuple([])
        }
    }

    /// A caller's container is read up to this many elements: what the agent's methods
    /// take is small (terms, ids, a group of clicks), and a huge array must not become a
    /// far larger one in Swift.
    static let maximumChildren = 4096

    private static func children(_ v: OpaquePointer) -> [DBusValue] {
        let n = min(g_variant_n_children(v), gsize(maximumChildren))
        var out: [DBusValue] = []
        out.reserveCapacity(Int(n))
        for i in 0..<Int(n) {
            let child = g_variant_get_child_value(v, gsize(i))!
            out.append(DBusValue(child))
            g_variant_unref(child)
        }
        return out
    }
}
