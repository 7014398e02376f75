import HandoffCore
import Testing

@Suite("JSON field reader")
struct JSONFieldReaderTests {
    static let object: JSONObject = [
        "s": .string("x"), "b": .bool(true), "i": .integer(-3), "d": .double(2.5), "n": .null,
        "list": .array([.string("a"), .string("b")]), "o": .object(["k": .integer(1)]), "t": .string("2026-11-21T10:00:00Z"),
    ]

    @Test func typedReads() throws {
        var r = JSONFieldReader(Self.object)
        #expect(try r.string("s") == "x")
        #expect(try r.requiredString("s") == "x")
        #expect(try r.bool("b") == true)
        #expect(try r.integer("i") == -3)
        #expect(try r.strings("list") == ["a", "b"])
        #expect(try r.object("o") == ["k": .integer(1)])
        #expect(try r.timestamp("t") == Timestamp(seconds: 1_795_255_200))
        let d = r.value("d")
        #expect(d == .double(2.5))
        let hasN = r.has("n")
        #expect(hasN)
        try r.rejectUnknownFields()
    }

    @Test func nullAndAbsentReadAsNil() throws {
        var r = JSONFieldReader(Self.object)
        for key in ["n", "absent"] {
            #expect(try r.string(key) == nil)
            #expect(try r.bool(key) == nil)
            #expect(try r.integer(key) == nil)
            #expect(try r.strings(key) == nil)
            #expect(try r.object(key) == nil)
            #expect(try r.timestamp(key) == nil)
        }
        let hasAbsent = r.has("absent")
        #expect(!hasAbsent)
        let e = #expect(throws: ValidationError.self) { try r.requiredString("n") }
        #expect(e?.field == "n")
        #expect(e?.problem == "is required")
    }

    @Test func wrongTypesNameFieldAndTypes() {
        var r = JSONFieldReader(Self.object, path: "outer")
        let cases: [(String, (inout JSONFieldReader) throws(ValidationError) -> Void, String, String)] = [
            ("s", { r throws(ValidationError) in _ = try r.bool("s") }, "outer.s", "must be true or false, not string"),
            ("d", { r throws(ValidationError) in _ = try r.integer("d") }, "outer.d", "must be an integer, not number"),
            ("i", { r throws(ValidationError) in _ = try r.string("i") }, "outer.i", "must be a string, not integer"),
            ("o", { r throws(ValidationError) in _ = try r.strings("o") }, "outer.o", "must be an array of strings, not object"),
            ("b", { r throws(ValidationError) in _ = try r.object("b") }, "outer.b", "must be an object, not boolean"),
            ("s", { r throws(ValidationError) in _ = try r.timestamp("s") }, "outer.s", "\"x\" is not an RFC 3339 date such as 2026-11-21T10:00:00Z"),
        ]
        for (key, read, field, problem) in cases {
            let e = #expect(throws: ValidationError.self, "\(key)") { try read(&r) }
            #expect(e?.field == field)
            #expect(e?.problem == problem)
        }
        let mixed = JSONObject(dictionaryLiteral: ("l", .array([.string("a"), .integer(1)])))
        var m = JSONFieldReader(mixed)
        let e = #expect(throws: ValidationError.self) { try m.strings("l") }
        #expect(e?.field == "l[1]")
        #expect(e?.problem == "must be a string, not integer")
    }

    @Test func unknownFieldsAreReportedInOrder() throws {
        var r = JSONFieldReader(Self.object, path: "origin")
        _ = try r.string("s")
        _ = r.has("b")
        _ = r.value("i")
        let e = #expect(throws: ValidationError.self) { try r.rejectUnknownFields() }
        #expect(e?.field == "origin.d")
        #expect(e?.problem == "unknown field")
        // Asking about a key, even an absent one, does not make others known.
        var empty = JSONFieldReader(JSONObject())
        _ = empty.has("x")
        try empty.rejectUnknownFields()
    }
}
