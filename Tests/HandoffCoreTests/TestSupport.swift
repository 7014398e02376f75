import HandoffCore
import Testing

/// A tiny deterministic PRNG (xorshift64*), so fuzz and property tests are reproducible.
struct XorShift64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
}

/// Parses JSON text, for tests that expect it to succeed.
func json(_ text: String) throws -> JSONValue { try JSONValue(parsing: text) }

/// Bitwise comparison of property values (distinguishes -0.0 from 0.0 and compares NaN
/// payloads), through the canonical binary encoding, whose dictionary keys are sorted.
func sameBits(_ a: PropertyValue, _ b: PropertyValue) -> Bool {
    PropertyBinaryEncoding.encode(a) == PropertyBinaryEncoding.encode(b)
}

/// One value of every kind, nested in every container, for round-trip tests. All doubles
/// are finite, so it also passes validation and survives JSON.
func everyKindValue() -> PropertyValue {
    let scalars: [PropertyValue] = [
        .string("héllo \"wörld\" \\ / \n\t\u{0}\u{1F}\u{7F}\u{2028}\u{2029} 🇫🇷 𝄞"),
        .string(""),
        .integer(0), .integer(-1), .integer(Int64.max), .integer(Int64.min),
        .double(0.1), .double(-0.0), .double(1e300), .double(.leastNonzeroMagnitude), .double(1.0), .double(-2.5e-10),
        .boolean(true), .boolean(false),
        .data([]), .data([0]), .data([0, 1]), .data([0, 1, 2]), .data(Array(0...255)),
        .date(Timestamp(seconds: 1_795_000_000, nanoseconds: 123_456_789)),
        .date(Timestamp(seconds: -1, nanoseconds: 999_999_999)),
        .url("https://example.com/path?q=1#frag"),
        .url("mailto:someone@example.com"),
        .null,
    ]
    let containers: [PropertyValue] = [
        .array([]), .dictionary([:]), .set([]),
        .array(scalars),
        .set(scalars),
        .dictionary(Dictionary(uniqueKeysWithValues: scalars.enumerated().map { ("k\($0.offset)", $0.element) })),
    ]
    return .dictionary([
        "scalars": .array(scalars),
        "containers": .array(containers),
        "$dollar": .string("escaped key"),
        "$$double": .integer(2),
        "$data": .dictionary(["$set": .integer(1)]),
        "$": .null,
        "": .string("empty key"),
        "nested": .array([.dictionary(["a": .set([.array([.dictionary(["b": .data([9, 8, 7])])])])])]),
    ])
}

/// An activity that uses every field and every value type.
func everyFieldActivity() -> Activity {
    guard case .dictionary(let info) = everyKindValue() else { fatalError() }
    var a = Activity(
        id: ActivityID("0123456789abcdef0123456789ABCDEF")!,
        activityType: "com.example.editor.edit-note",
        title: "Editing “Groceries” ✏️",
        userInfo: info,
        requiredUserInfoKeys: ["nested", "scalars"],
        webpageURL: "https://example.com/notes/42?x=1#top",
        expirationDate: Timestamp(seconds: 1_900_000_000, nanoseconds: 500_000_000),
        keywords: ["notes", "groceries", "ünïcödé"],
        eligibleForHandoff: false,
        eligibleForSearch: true,
        eligibleForPublicIndexing: true,
        supportsContinuationStreams: true,
        needsSave: true,
        createdAt: Timestamp(seconds: 1_795_000_000, nanoseconds: 1),
        updatedAt: Timestamp(seconds: 1_795_000_123, nanoseconds: 120_000_000),
        origin: DeviceRef(name: "laptop", id: "dev-1234"))
    a.referrerURL = "https://example.com/search?q=groceries"
    a.persistentIdentifier = "note/42"
    a.targetContentIdentifier = "window:notes"
    a.eligibleForPrediction = true
    a.contentDescription = "Milk, eggs, “bread”"
    a.displayName = "Groceries"
    a.thumbnail = tinyPNG
    return a
}

/// The first bytes of a PNG and a few more: what a thumbnail must start with.
let tinyPNG: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]

/// A random property value (finite doubles only, dates within years 1..9999 so they
/// survive RFC 3339), at most `depth` containers deep.
func randomValue(_ g: inout XorShift64, depth: Int) -> PropertyValue {
    let kinds = depth > 0 ? 11 : 8
    switch g.below(kinds) {
    case 0: return .null
    case 1: return .boolean(g.next() & 1 == 0)
    case 2:
        switch g.below(4) {
        case 0: return .integer(Int64(g.below(200)) - 100)
        case 1: return .integer(Int64.min)
        case 2: return .integer(Int64.max)
        default: return .integer(Int64(bitPattern: g.next()))
        }
    case 3:
        var d: Double
        repeat { d = Double(bitPattern: g.next()) } while !d.isFinite
        let specials: [Double] = [0, -0.0, 0.1, 1.0, -1.0, 1e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 100, d]
        return .double(specials[g.below(specials.count)])
    case 4: return .string(randomString(&g))
    case 5: return .data(g.bytes(g.below(9)))
    case 6:
        // 0001-01-01 .. 9999-12-31
        let lo: Int64 = -62_135_596_800, hi: Int64 = 253_402_300_799
        let s = lo + Int64(g.next() % UInt64(hi - lo))
        return .date(Timestamp(seconds: s, nanoseconds: Int32(g.below(1_000_000_000))))
    case 7: return .url("https://example.com/" + String(g.below(1000)))
    case 8: return .array((0..<g.below(4)).map { _ in randomValue(&g, depth: depth - 1) })
    case 9: return .set((0..<g.below(4)).map { _ in randomValue(&g, depth: depth - 1) })
    default:
        var d: [String: PropertyValue] = [:]
        for _ in 0..<g.below(4) {
            let prefix = ["", "$", "$$", "$data", "k"][g.below(5)]
            d[prefix + randomString(&g)] = randomValue(&g, depth: depth - 1)
        }
        return .dictionary(d)
    }
}

func randomString(_ g: inout XorShift64) -> String {
    var s = String.UnicodeScalarView()
    for _ in 0..<g.below(6) {
        let pools: [ClosedRange<UInt32>] = [0...0x7F, 0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFF, 0x10000...0x10FFFF]
        let pool = pools[g.below(pools.count)]
        let v = pool.lowerBound + UInt32(g.next() % UInt64(pool.upperBound - pool.lowerBound + 1))
        s.append(Unicode.Scalar(v)!)
    }
    return String(s)
}
