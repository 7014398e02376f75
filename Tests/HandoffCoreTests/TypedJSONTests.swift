import HandoffCore
import Testing

@Suite("Typed JSON")
struct TypedJSONTests {
    /// encode -> decode, and encode -> text -> parse -> decode, both give back the value.
    func roundTrip(_ v: PropertyValue, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let encoded = TypedJSON.encode(v)
        let direct = try TypedJSON.decode(encoded, path: "v")
        #expect(direct == v, sourceLocation: sourceLocation)
        #expect(sameBits(direct, v), sourceLocation: sourceLocation)
        for text in [encoded.serialized(), encoded.prettySerialized()] {
            let reparsed = try JSONValue(parsing: text)
            #expect(reparsed == encoded, sourceLocation: sourceLocation)
            let back = try TypedJSON.decode(reparsed, path: "v")
            #expect(back == v, "\(text)", sourceLocation: sourceLocation)
            #expect(sameBits(back, v), "\(text)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Encoding shape

    @Test func scalarsStandForThemselves() {
        #expect(TypedJSON.encode(.string("s")) == .string("s"))
        #expect(TypedJSON.encode(.integer(3)) == .integer(3))
        #expect(TypedJSON.encode(.double(3)) == .double(3))
        #expect(TypedJSON.encode(.boolean(true)) == .bool(true))
        #expect(TypedJSON.encode(.null) == .null)
        #expect(TypedJSON.encode(.array([.integer(1)])) == .array([.integer(1)]))
        #expect(TypedJSON.encode(.dictionary(["a": .integer(1)])) == .object(["a": .integer(1)]))
    }

    @Test func taggedTypes() {
        #expect(TypedJSON.encode(.data([1, 2, 3])) == .object(["$data": .string("AQID")]))
        #expect(TypedJSON.encode(.date(Timestamp(seconds: 0, nanoseconds: 250_000_000))) == .object(["$date": .string("1970-01-01T00:00:00.250Z")]))
        #expect(TypedJSON.encode(.url("https://x.test/")) == .object(["$url": .string("https://x.test/")]))
        #expect(TypedJSON.encode(.set([.integer(1), .string("a")])) == .object(["$set": .array([.integer(1), .string("a")])]))
    }

    @Test func dictionaryKeysAreSortedAndDollarKeysEscaped() {
        let o = TypedJSON.encode(dictionary: ["b": .null, "$price": .integer(3), "a": .null, "$$x": .null, "$": .null])
        #expect(o.keys == ["$$", "$$$x", "$$price", "a", "b"])
        #expect(JSONValue.object(o).serialized() == #"{"$$":null,"$$$x":null,"$$price":3,"a":null,"b":null}"#)
    }

    // MARK: - Round trips

    @Test func everyScalarKindRoundTrips() throws {
        for v: PropertyValue in [
            .string(""), .string("plain"), .string("\"\\\n\u{0}\u{2028}😀"), .integer(0), .integer(Int64.min), .integer(Int64.max),
            .double(0.1), .double(-0.0), .double(1e300), .double(.leastNonzeroMagnitude), .double(1.0), .double(-7.0),
            .boolean(true), .boolean(false), .null,
            .url("https://example.com/a?b=c#d"), .url(""), .url("not a url at all"),
        ] {
            try roundTrip(v)
        }
    }

    @Test(arguments: [0, 1, 2, 3, 4, 5, 6, 255, 256, 1000])
    func dataOfEveryPaddingLengthRoundTrips(_ n: Int) throws {
        var g = XorShift64(seed: UInt64(n) + 1)
        try roundTrip(.data(g.bytes(n)))
        try roundTrip(.data([UInt8](repeating: 0xFF, count: n)))
        try roundTrip(.data([UInt8](repeating: 0, count: n)))
    }

    @Test func dataPadding() {
        #expect(TypedJSON.encode(.data([])) == .object(["$data": .string("")]))
        #expect(TypedJSON.encode(.data([0])) == .object(["$data": .string("AA==")]))
        #expect(TypedJSON.encode(.data([0, 1])) == .object(["$data": .string("AAE=")]))
        #expect(TypedJSON.encode(.data([0, 1, 2])) == .object(["$data": .string("AAEC")]))
    }

    @Test func datesWithNanosecondsRoundTrip() throws {
        for t in [
            Timestamp(seconds: 0), Timestamp(seconds: 1_795_255_200, nanoseconds: 1), Timestamp(seconds: 1_795_255_200, nanoseconds: 123_456_789),
            Timestamp(seconds: 1_795_255_200, nanoseconds: 120_000_000), Timestamp(seconds: -1, nanoseconds: 999_999_999),
            Timestamp(seconds: -62_135_596_800, nanoseconds: 5), Timestamp(seconds: 253_402_300_799, nanoseconds: 999_999_999),
        ] {
            try roundTrip(.date(t))
        }
    }

    @Test func emptyContainersRoundTrip() throws {
        try roundTrip(.array([]))
        try roundTrip(.dictionary([:]))
        try roundTrip(.set([]))
        try roundTrip(.array([.array([]), .set([]), .dictionary([:])]))
        #expect(TypedJSON.encode(.set([])) == .object(["$set": .array([])]))
        #expect(TypedJSON.encode(.dictionary([:])) == .object([:]))
    }

    @Test func nestedMixOfEveryKindRoundTrips() throws {
        try roundTrip(everyKindValue())
    }

    @Test func dollarKeysRoundTrip() throws {
        // Keys that look like tags, alone or among others, and keys that are already escaped.
        for d: [String: PropertyValue] in [
            ["$data": .string("AA==")], ["$date": .integer(1)], ["$url": .null], ["$set": .array([])], ["$foo": .boolean(true)],
            ["$": .null], ["$$": .null], ["$$data": .string("x")], ["$$$": .integer(1)],
            ["$data": .null, "plain": .null], ["$a": .null, "$b": .null],
            ["outer": .dictionary(["$date": .dictionary(["$set": .set([.dictionary(["$url": .url("a:b")])])])])],
        ] {
            try roundTrip(.dictionary(d))
        }
    }

    @Test func setOrderIsKept() throws {
        let v = PropertyValue.set([.integer(3), .integer(1), .integer(2)])
        let back = try TypedJSON.decode(try JSONValue(parsing: TypedJSON.encode(v).serialized()), path: "s")
        #expect(back == v)
        #expect(back != .set([.integer(1), .integer(2), .integer(3)]))
    }

    @Test func randomValuesRoundTrip() throws {
        var g = XorShift64(seed: 0x5EED)
        for _ in 0..<500 {
            try roundTrip(randomValue(&g, depth: 4))
        }
    }

    @Test func aDateBeyondRFC3339FromThePeerEncodingIsRefused() async throws {
        // zigzag(Int64.min) is UInt64.max: a peer could send this date. It cannot be written
        // in RFC 3339, so decoding refuses it instead of passing it on to crash a formatter.
        let bytes: [UInt8] = [0x07] + [UInt8](repeating: 0xFF, count: 9) + [0x01, 0x00]
        #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(bytes) }
        // Built by hand, such a value fails validation, and formatting it does not trap.
        var a = everyFieldActivity()
        a.userInfo = ["when": .date(Timestamp(seconds: Int64.min))]
        let e = #expect(throws: ValidationError.self) { try ActivityValidation.validate(a, limits: ActivityLimits()) }
        #expect(e?.field == "userInfo.when")
        await #expect(processExitsWith: .success) {
            _ = TypedJSON.encode(.date(Timestamp(seconds: Int64.min))).serialized()
        }
    }

    // MARK: - Decoding hand-written JSON

    @Test func decodesHandWrittenTypedJSON() throws {
        let text = #"""
            {"n": 1, "d": 1.5, "e": 1e2, "s": "x", "b": false, "z": null,
             "bytes": {"$data": "aGVsbG8="}, "when": {"$date": "2026-11-21T15:30:00.5+05:30"},
             "link": {"$url": "https://example.com"}, "tags": {"$set": ["a", "b"]},
             "$$price": 3, "list": [1, {"$set": []}], "$$data": {"$$url": "x"}}
            """#
        let v = try TypedJSON.decode(try json(text), path: "userInfo")
        let expected: PropertyValue = .dictionary([
            "n": .integer(1), "d": .double(1.5), "e": .double(100), "s": .string("x"), "b": .boolean(false), "z": .null,
            "bytes": .data(Array("hello".utf8)), "when": .date(Timestamp(seconds: 1_795_255_200, nanoseconds: 500_000_000)),
            "link": .url("https://example.com"), "tags": .set([.string("a"), .string("b")]),
            "$price": .integer(3), "list": .array([.integer(1), .set([])]),
            "$data": .dictionary(["$url": .string("x")]),
        ])
        #expect(v == expected)
    }

    @Test func integerAndDoubleStayDistinct() throws {
        #expect(try TypedJSON.decode(try json("1"), path: "x") == .integer(1))
        #expect(try TypedJSON.decode(try json("1.0"), path: "x") == .double(1))
        #expect(try TypedJSON.decode(try json("1e0"), path: "x") == .double(1))
    }

    // MARK: - Errors name the path

    @Test func unknownTagErrorNamesThePath() throws {
        let doc = try json(#"{"a": {"b": [0, 1, {"$money": 5}]}}"#)
        let e = #expect(throws: ValidationError.self) { try TypedJSON.decode(dictionary: doc.objectValue!, path: "userInfo") }
        #expect(e?.field == "userInfo.a.b[2]")
        #expect(e?.problem.contains("$money") == true)
    }

    @Test func unescapedDollarKeyAmongOthersIsAnError() throws {
        let doc = try json(#"{"a": {"$data": "AA==", "other": 1}}"#)
        let e = #expect(throws: ValidationError.self) { try TypedJSON.decode(dictionary: doc.objectValue!, path: "userInfo") }
        #expect(e?.field == "userInfo.a.$data")
        #expect(e?.problem.contains("$$") == true)
    }

    @Test(arguments: [
        (#"{"$data": 5}"#, "$data"), (#"{"$data": "AA="}"#, "$data"), (#"{"$data": "A==="}"#, "$data"), (#"{"$data": "AA AA=="}"#, "$data"),
        (#"{"$data": "_-8="}"#, "$data"), (#"{"$data": null}"#, "$data"), (#"{"$data": ["AA=="]}"#, "$data"),
        (#"{"$date": "2026-02-30T00:00:00Z"}"#, "$date"), (#"{"$date": "2026-11-21T10:00:00.1234567890Z"}"#, "$date"),
        (#"{"$date": "yesterday"}"#, "$date"), (#"{"$date": 1795255200}"#, "$date"), (#"{"$date": "2026-11-21T10:00:00"}"#, "$date"),
        (#"{"$url": 5}"#, "$url"), (#"{"$url": null}"#, "$url"), (#"{"$url": {"$url": "x:y"}}"#, "$url"),
        (#"{"$set": "a"}"#, "$set"), (#"{"$set": {}}"#, "$set"), (#"{"$set": null}"#, "$set"),
    ])
    func badTaggedValuesNameTheFieldPath(_ body: String, _ tag: String) throws {
        let doc = try json(#"{"a": {"b": [0, 1, \#(body)]}}"#)
        let e = #expect(throws: ValidationError.self, "\(body)") { try TypedJSON.decode(dictionary: doc.objectValue!, path: "userInfo") }
        #expect(e?.field == "userInfo.a.b[2]", "\(body)")
        #expect(e?.problem.contains(tag) == true, "\(body)")
        #expect(e?.description.hasPrefix("userInfo.a.b[2]: ") == true)
    }

    @Test func errorsInsideSetsNameTheElement() throws {
        let doc = try json(#"{"s": {"$set": [1, {"$date": "nope"}]}}"#)
        let e = #expect(throws: ValidationError.self) { try TypedJSON.decode(dictionary: doc.objectValue!, path: "userInfo") }
        #expect(e?.field == "userInfo.s[1]")
    }

    @Test func errorPathsUseTheUnescapedKey() throws {
        let doc = try json(#"{"$$k": {"$data": "!"}}"#)
        let e = #expect(throws: ValidationError.self) { try TypedJSON.decode(dictionary: doc.objectValue!, path: "userInfo") }
        #expect(e?.field == "userInfo.$k")
    }
}
