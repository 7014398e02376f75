import HandoffCore
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    // MARK: - Every JSON type

    @Test func parsesScalars() throws {
        #expect(try json("null") == .null)
        #expect(try json("true") == .bool(true))
        #expect(try json("false") == .bool(false))
        #expect(try json("0") == .integer(0))
        #expect(try json("-0") == .integer(0))
        #expect(try json("42") == .integer(42))
        #expect(try json("-17") == .integer(-17))
        #expect(try json("3.25") == .double(3.25))
        #expect(try json("-0.5") == .double(-0.5))
        #expect(try json("\"hi\"") == .string("hi"))
        #expect(try json("\"\"") == .string(""))
    }

    @Test func parsesContainers() throws {
        #expect(try json("[]") == .array([]))
        #expect(try json("{}") == .object(JSONObject()))
        #expect(try json("[1, \"a\", null, true, 2.5, [], {}]")
            == .array([.integer(1), .string("a"), .null, .bool(true), .double(2.5), .array([]), .object([:])]))
        let v = try json(#"{"a": {"b": [1, {"c": null}]}, "d": false}"#)
        #expect(v == .object(["a": .object(["b": .array([.integer(1), .object(["c": .null])])]), "d": .bool(false)]))
    }

    @Test func whitespaceAroundTokensIsAllowed() throws {
        let v = try json(" \t\r\n{ \"a\" \n:\t[ 1 ,\r\n 2 ] } \n")
        #expect(v == .object(["a": .array([.integer(1), .integer(2)])]))
    }

    @Test func typeNames() throws {
        #expect(JSONValue.null.typeName == "null")
        #expect(JSONValue.bool(true).typeName == "boolean")
        #expect(JSONValue.integer(1).typeName == "integer")
        #expect(JSONValue.double(1).typeName == "number")
        #expect(JSONValue.string("").typeName == "string")
        #expect(JSONValue.array([]).typeName == "array")
        #expect(JSONValue.object([:]).typeName == "object")
    }

    // MARK: - Numbers

    @Test func integersAndDoublesStayDistinct() throws {
        #expect(try json("1") == .integer(1))
        #expect(try json("1.0") == .double(1.0))
        #expect(try json("1e2") == .double(100))
        #expect(try json("1E2") == .double(100))
        #expect(try json("1e+2") == .double(100))
        #expect(try json("1e-2") == .double(0.01))
        #expect(try json("-1.5E-3") == .double(-0.0015))
        #expect(try json("0e0") == .double(0))
        #expect(try json("1") != .double(1))
        #expect(try json("1.0") != .integer(1))
        #expect(try json("[1, 1.0]") == .array([.integer(1), .double(1)]))
    }

    @Test func negativeZeroDoubleKeepsItsSign() throws {
        guard case .double(let d) = try json("-0.0") else { Issue.record("not a double"); return }
        #expect(d == 0 && d.sign == .minus)
    }

    @Test func int64Extremes() throws {
        #expect(try json("9223372036854775807") == .integer(Int64.max))
        #expect(try json("-9223372036854775808") == .integer(Int64.min))
    }

    @Test(arguments: ["9223372036854775808", "-9223372036854775809", "99999999999999999999999", "[18446744073709551616]"])
    func integerOverflowIsAnError(_ text: String) throws {
        let e = #expect(throws: JSONParseError.self) { try json(text) }
        #expect(e?.message.contains("64 bits") == true)
    }

    @Test func largeNumbersWithFractionOrExponentAreDoubles() throws {
        #expect(try json("9223372036854775808.0") == .double(9_223_372_036_854_775_808.0))
        #expect(try json("1e300") == .double(1e300))
        #expect(try json("5e-324") == .double(.leastNonzeroMagnitude))
    }

    @Test(arguments: ["1e400", "-1e400", "1e999999"])
    func doublesOutOfRangeAreRejected(_ text: String) {
        #expect(throws: JSONParseError.self) { try json(text) }
    }

    @Test(arguments: [
        "01", "-01", "00", "007", "-", "+1", ".5", "1.", "1.e3", "1e", "1e+", "-e1", "0x10", "1_000",
        "NaN", "nan", "Infinity", "-Infinity", "inf", "--1", "1..2", "1ee2",
    ])
    func malformedNumbersAreRejected(_ text: String) {
        #expect(throws: JSONParseError.self) { try json(text) }
        #expect(throws: JSONParseError.self) { try json("[\(text)]") }
    }

    @Test func leadingZeroErrorIsReported() {
        let e = #expect(throws: JSONParseError.self) { try json("[01]") }
        #expect(e?.message.contains("leading zeros") == true)
    }

    // MARK: - Strings

    @Test func simpleEscapes() throws {
        #expect(try json(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{08}\u{0C}\n\r\t"))
    }

    @Test func unicodeEscapes() throws {
        #expect(try json(#""\u0041\u00e9\u00E9\u4e2d\u0000""#) == .string("Aéé中\u{0}"))
        #expect(try json(#""\u2028\u2029""#) == .string("\u{2028}\u{2029}"))
        // A surrogate pair makes one scalar outside the BMP.
        #expect(try json(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try json(#""\uD834\uDD1E x""#) == .string("𝄞 x"))
        // Escapes mixed with raw UTF-8 runs.
        #expect(try json(#""é\u00e9é\n😀""#) == .string("ééé\n😀"))
    }

    @Test(arguments: [
        #""\ud83d""#,  // lone high surrogate at the end
        #""\ud83d x""#,  // high surrogate followed by something else
        #""\ud83d\u0041""#,  // high surrogate + non-surrogate escape
        #""\ud83d\ud83d""#,  // two highs
        #""\ude00""#,  // lone low surrogate
        #""\u12""#, #""\u12G4""#, #""\u""#, #""\x41""#, #""\a""#, #""\'""#, #""\U0041""#,
    ])
    func invalidEscapesAreRejected(_ text: String) {
        #expect(throws: JSONParseError.self) { try json(text) }
    }

    @Test func rawUTF8IsAccepted() throws {
        let bytes: [UInt8] = [0x22, 0xC3, 0xA9, 0xE4, 0xB8, 0xAD, 0xF0, 0x9F, 0x98, 0x80, 0x22]
        #expect(try JSONValue(parsing: bytes) == .string("é中😀"))
    }

    @Test(arguments: [
        [0x80],  // stray continuation byte
        [0xC3],  // truncated 2-byte sequence
        [0xC3, 0x28],  // bad continuation
        [0xC0, 0x80],  // overlong NUL
        [0xE0, 0x80, 0x80],  // overlong
        [0xED, 0xA0, 0x80],  // UTF-8-encoded surrogate
        [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        [0xFF],
        [0xFE],
        [0xC3, 0x5C, 0x6E, 0xA9],  // a sequence split by an escape (\n)
    ] as [[UInt8]])
    func invalidUTF8InStringsIsRejected(_ inner: [UInt8]) {
        let bytes: [UInt8] = [0x22] + inner + [0x22]
        let e = #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
        if inner.count > 1 && inner[1] == 0x5C { return }  // the split case may fail at either half
        #expect(e?.message.contains("UTF-8") == true)
    }

    @Test func invalidUTF8InObjectKeysIsRejected() {
        let bytes: [UInt8] = Array(#"{""#.utf8) + [0xFF] + Array(#"":1}"#.utf8)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
    }

    @Test func unescapedControlCharactersAreRejected() throws {
        for c in UInt8(0)..<0x20 {
            let bytes: [UInt8] = [0x22, 0x61, c, 0x62, 0x22]
            let e = #expect(throws: JSONParseError.self, "control character \(c)") { try JSONValue(parsing: bytes) }
            #expect(e?.message.contains("control character") == true)
            #expect(e?.offset == 2)
        }
        // DEL is not a control character in JSON's sense.
        #expect(try JSONValue(parsing: [0x22, 0x7F, 0x22]) == .string("\u{7F}"))
    }

    @Test func unterminatedStrings() {
        for text in [#"""#, #""abc"#, #""abc\"#, #""abc\""#, #"["abc]"#] {
            #expect(throws: JSONParseError.self, "\(text)") { try json(text) }
        }
    }

    // MARK: - Objects

    @Test func duplicateKeysAreRejected() {
        let e = #expect(throws: JSONParseError.self) { try json(#"{"a": 1, "b": 2, "a": 3}"#) }
        #expect(e?.message.contains("duplicate key \"a\"") == true)
        #expect(e?.offset == 17)
        // Keys equal after unescaping are duplicates too.
        #expect(throws: JSONParseError.self) { try json(#"{"a": 1, "\u0061": 2}"#) }
        // Nested duplicates too.
        #expect(throws: JSONParseError.self) { try json(#"[{"x": {"k": 1, "k": 1}}]"#) }
    }

    @Test func sameKeyInDifferentObjectsIsFine() throws {
        let v = try json(#"{"a": {"a": 1}, "b": {"a": 2}}"#)
        #expect(v == .object(["a": .object(["a": .integer(1)]), "b": .object(["a": .integer(2)])]))
    }

    @Test func keyOrderIsPreserved() throws {
        let v = try json(#"{"zebra": 1, "apple": 2, "mango": 3, "banana": 4}"#)
        let o = try #require(v.objectValue)
        #expect(o.keys == ["zebra", "apple", "mango", "banana"])
        #expect(v.serialized() == #"{"zebra":1,"apple":2,"mango":3,"banana":4}"#)
    }

    @Test func objectEqualityIsOrderSensitive() {
        let a: JSONObject = ["x": .integer(1), "y": .integer(2)]
        let b: JSONObject = ["y": .integer(2), "x": .integer(1)]
        #expect(a != b)
        #expect(a == ["x": .integer(1), "y": .integer(2)])
    }

    @Test func jsonObjectSubscriptSetsReplacesAndRemoves() {
        var o = JSONObject()
        #expect(o.isEmpty)
        o["a"] = .integer(1)
        o["b"] = .integer(2)
        o["a"] = .integer(3)
        #expect(o.keys == ["a", "b"])
        #expect(o["a"] == .integer(3))
        o["a"] = nil
        #expect(o.keys == ["b"])
        #expect(o.count == 1)
        #expect(o["missing"] == nil)
    }

    // MARK: - Rejections

    @Test(arguments: [
        "", " ", "[1,]", "[1,,2]", "[,1]", "{\"a\":1,}", "{,}", "{\"a\" 1}", "{\"a\":}", "{1:2}", "{a:1}",
        "{'a':1}", "['a']", "[1 2]", "{\"a\":1 \"b\":2}", "// c\n1", "/* c */ 1", "1 // c", "[1] /**/",
        "# c\n1", "tru", "True", "nul", "NULL", "falsey", "[1]]", "{}}", "1 2", "[] []", "\"a\" \"b\"",
        "\u{FEFF}1", "[", "]", "{", "}", ":", ",", "undefined", "\u{0B}1", "\u{0C}1", "\u{A0}1",
    ])
    func malformedDocumentsAreRejected(_ text: String) {
        #expect(throws: JSONParseError.self) { try json(text) }
    }

    @Test func trailingGarbageIsRejectedWithItsOffset() {
        let e = #expect(throws: JSONParseError.self) { try json("{\"a\":1} x") }
        #expect(e?.offset == 8)
        #expect(e?.message.contains("after the JSON value") == true)
        #expect(e?.description.hasPrefix("invalid JSON at byte 8:") == true)
    }

    @Test func everyProperPrefixOfADocumentFailsCleanly() throws {
        let text = #"{"a": [1, -2.5e3, true, false, null, "s\"\u00e9\ud83d\ude00é"], "b": {"c": {}}, "d": [[], [0.0]], "e": -9223372036854775808}"#
        let bytes = Array(text.utf8)
        let full = try JSONValue(parsing: bytes)
        #expect(full.objectValue?.count == 4)
        for n in 0..<bytes.count {
            #expect(throws: JSONParseError.self, "prefix of \(n) bytes") { try JSONValue(parsing: Array(bytes[0..<n])) }
        }
    }

    @Test func everyProperPrefixOfAnArrayFailsCleanly() throws {
        let bytes = Array(#"[1,2.0,"x",{"k":[null]},[true,false],-0]"#.utf8)
        _ = try JSONValue(parsing: bytes)
        for n in 0..<bytes.count {
            #expect(throws: JSONParseError.self, "prefix of \(n) bytes") { try JSONValue(parsing: Array(bytes[0..<n])) }
        }
    }

    // MARK: - Depth

    @Test func nestingUpToTheLimitIsAccepted() throws {
        let depth = JSONValue.maximumDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var v = try json(text)
        var levels = 0
        while case .array(let items) = v {
            levels += 1
            guard let first = items.first else { break }
            v = first
        }
        #expect(levels == depth)
    }

    @Test func nestingBeyondTheLimitIsRejected() {
        let depth = JSONValue.maximumDepth + 1
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let e = #expect(throws: JSONParseError.self) { try json(arrays) }
        #expect(e?.message.contains("nested deeper") == true)
    }

    @Test func aScalarCountsAsALevel() {
        // The document's top value is level 1: 63 objects plus the scalar inside make 64 levels.
        let max = JSONValue.maximumDepth
        func objects(_ n: Int) -> String {
            String(repeating: "{\"a\":", count: n) + "1" + String(repeating: "}", count: n)
        }
        #expect(throws: Never.self) { try json(objects(max - 1)) }
        #expect(throws: JSONParseError.self) { try json(objects(max)) }
    }

    @Test func hostileNestingDoesNotOverflowTheStack() {
        #expect(throws: JSONParseError.self) { try json(String(repeating: "[", count: 100_000)) }
        #expect(throws: JSONParseError.self) {
            try json(String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000))
        }
        #expect(throws: JSONParseError.self) { try json(String(repeating: "{\"a\":", count: 100_000)) }
        #expect(throws: JSONParseError.self) { try json(String(repeating: "[{\"a\":", count: 50_000)) }
    }
}
