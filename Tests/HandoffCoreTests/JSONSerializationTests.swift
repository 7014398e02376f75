import HandoffCore
import Testing

@Suite("JSON serialization")
struct JSONSerializationTests {
    static let sample: JSONValue = .object([
        "null": .null,
        "t": .bool(true),
        "f": .bool(false),
        "int": .integer(42),
        "min": .integer(Int64.min),
        "max": .integer(Int64.max),
        "doubles": .array([.double(0.1), .double(1e300), .double(-0.0), .double(.leastNonzeroMagnitude), .double(1.0), .double(-3.0), .double(1e16), .double(.greatestFiniteMagnitude)]),
        "string": .string("quote \" backslash \\ slash / nl \n cr \r tab \t bs \u{08} ff \u{0C} nul \u{0} us \u{1F} del \u{7F} ls \u{2028} ps \u{2029} é 中 😀"),
        "empty": .object([:]),
        "emptyArray": .array([]),
        "nested": .array([.object(["z": .array([.array([])]), "a": .object(["": .string("")])])]),
    ])

    @Test func compactRoundTrip() throws {
        let text = Self.sample.serialized()
        #expect(!text.contains("\n"))
        #expect(try json(text) == Self.sample)
    }

    @Test func prettyRoundTrip() throws {
        let text = Self.sample.prettySerialized()
        #expect(text.contains("\n  \""))
        #expect(try json(text) == Self.sample)
    }

    @Test func prettyLayout() {
        let v: JSONValue = .object(["a": .array([.integer(1), .object(["b": .null])]), "c": .array([]), "d": .object([:])])
        #expect(v.prettySerialized() == """
            {
              "a": [
                1,
                {
                  "b": null
                }
              ],
              "c": [],
              "d": {}
            }
            """)
    }

    @Test func compactLayout() {
        let v: JSONValue = .object(["a": .array([.integer(1), .double(2), .string("x")]), "b": .bool(false)])
        #expect(v.serialized() == #"{"a":[1,2.0,"x"],"b":false}"#)
    }

    @Test(arguments: [0.1, 1e300, -0.0, 0.0, .leastNonzeroMagnitude, 1.0, -1.0, 100.0, 1e16, 1e-7, 123456789.125, 2.2250738585072014e-308,
                      .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .pi, 9007199254740993.0, 0.30000000000000004])
    func doublesRoundTripExactly(_ d: Double) throws {
        let text = JSONValue.double(d).serialized()
        let back = try json(text)
        guard case .double(let e) = back else {
            Issue.record("\(text) parsed back as \(back)")
            return
        }
        #expect(e.bitPattern == d.bitPattern, "\(text)")
    }

    @Test func wholeNumberDoublesKeepAMarker() throws {
        for d in [1.0, -2.0, 0.0, 1e15, 1e16, 1e22, 4.0e100] {
            let text = JSONValue.double(d).serialized()
            #expect(text.contains(".") || text.contains("e") || text.contains("E"), "\(text)")
            #expect(try json(text) == .double(d))
        }
        #expect(JSONValue.double(1.0).serialized() == "1.0")
        #expect(JSONValue.double(-0.0).serialized() == "-0.0")
    }

    @Test func integersSerializeWithoutFraction() {
        #expect(JSONValue.integer(1).serialized() == "1")
        #expect(JSONValue.integer(Int64.min).serialized() == "-9223372036854775808")
        #expect(JSONValue.integer(Int64.max).serialized() == "9223372036854775807")
    }

    @Test func stringEscaping() {
        #expect(JSONValue.string("a\"b\\c").serialized() == #""a\"b\\c""#)
        #expect(JSONValue.string("\n\r\t\u{08}\u{0C}").serialized() == #""\n\r\t\b\f""#)
        #expect(JSONValue.string("\u{0}\u{1}\u{1F}").serialized() == #""\u0000\u0001\u001f""#)
        #expect(JSONValue.string("\u{2028}\u{2029}").serialized() == #""\u2028\u2029""#)
        #expect(JSONValue.string("é😀/").serialized() == "\"é😀/\"")
    }

    @Test func runsBetweenEscapesAreCopiedWhole() {
        #expect(JSONValue.string("ab\"cd\nef").serialized() == #""ab\"cd\nef""#)
        // Neighbours of U+2028 and U+2029 share their first two bytes and stay as they are.
        #expect(JSONValue.string("x\u{2027}\u{2028}\u{202A}\u{2029}y").serialized() == "\"x\u{2027}\\u2028\u{202A}\\u2029y\"")
        // U+00E2 U+0080 (C3 A2 C2 80): the bytes E2 and 80 appear, not as a sequence.
        #expect(JSONValue.string("\u{E2}\u{80}\u{A8}").serialized() == "\"\u{E2}\u{80}\u{A8}\"")
        #expect(JSONValue.string("").serialized() == #""""#)
    }

    @Test func everyControlCharacterRoundTrips() throws {
        let s = String(String.UnicodeScalarView((0..<0x20).map { Unicode.Scalar(UInt8($0)) }))
        let text = JSONValue.string(s).serialized()
        #expect(!text.utf8.contains { $0 < 0x20 })
        #expect(try json(text) == .string(s))
    }

    @Test func keysAreEscapedToo() throws {
        let v: JSONValue = .object(["a\"\n\u{1}": .integer(1)])
        #expect(try json(v.serialized()) == v)
        #expect(try json(v.prettySerialized()) == v)
    }

    @Test func keyOrderSurvivesSerialization() throws {
        var o = JSONObject()
        for k in ["z", "b", "y", "a", "x"] { o[k] = .string(k) }
        let back = try json(JSONValue.object(o).serialized())
        #expect(back.objectValue?.keys == ["z", "b", "y", "a", "x"])
        let pretty = try json(JSONValue.object(o).prettySerialized())
        #expect(pretty.objectValue?.keys == ["z", "b", "y", "a", "x"])
    }

    @Test func randomDocumentsRoundTrip() throws {
        var g = XorShift64(seed: 0xDEC0DE)
        for _ in 0..<500 {
            let v = Self.randomJSON(&g, depth: 5)
            #expect(try json(v.serialized()) == v)
            #expect(try json(v.prettySerialized()) == v)
        }
    }

    static func randomJSON(_ g: inout XorShift64, depth: Int) -> JSONValue {
        switch g.below(depth > 0 ? 8 : 6) {
        case 0: return .null
        case 1: return .bool(g.next() & 1 == 1)
        case 2: return .integer(Int64(bitPattern: g.next()))
        case 3:
            var d: Double
            repeat { d = Double(bitPattern: g.next()) } while !d.isFinite
            return .double(d)
        case 4, 5: return .string(randomString(&g))
        case 6: return .array((0..<g.below(4)).map { _ in randomJSON(&g, depth: depth - 1) })
        default:
            var o = JSONObject()
            for _ in 0..<g.below(4) { o[randomString(&g)] = randomJSON(&g, depth: depth - 1) }
            return .object(o)
        }
    }
}
