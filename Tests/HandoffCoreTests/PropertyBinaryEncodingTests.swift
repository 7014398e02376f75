import HandoffCore
import Testing

@Suite("Property binary encoding")
struct PropertyBinaryEncodingTests {
    /// Found by fuzz-plist (.build-fuzz/crashes, input CQQDAQT//////wn6bAcAAQc0AA==): an array
    /// holding a NaN with a payload decodes and encodes back to the same bytes, although the
    /// value is never equal to itself; round trips compare encodings.
    @Test func aNaNWithAPayloadKeepsItsBytes() throws {
        let input: [UInt8] = [0x09, 0x04, 0x03, 0x01, 0x04, 0xff, 0xff, 0xff, 0xff, 0xff, 0x09, 0xfa, 0x6c, 0x07, 0x00, 0x01, 0x07, 0x34, 0x00]
        let value = try PropertyBinaryEncoding.decode(input)
        #expect(PropertyBinaryEncoding.encode(value) == input)
        let copy = try PropertyBinaryEncoding.decode(PropertyBinaryEncoding.encode(value))
        #expect(copy != value, "NaN inside: a decoded copy is not equal, so equality cannot be the round-trip check")
        #expect(PropertyBinaryEncoding.encode(copy) == input)
    }

    func roundTrip(_ v: PropertyValue, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = PropertyBinaryEncoding.encode(v)
        let back = try PropertyBinaryEncoding.decode(bytes)
        #expect(sameBits(back, v), sourceLocation: sourceLocation)
        #expect(PropertyBinaryEncoding.encode(back) == bytes, sourceLocation: sourceLocation)
    }

    func varint(_ v: UInt64) -> [UInt8] {
        var w = BinaryWriter()
        w.writeVarint(v)
        return w.bytes
    }

    // MARK: - Layout

    @Test func scalarLayout() {
        #expect(PropertyBinaryEncoding.encode(.null) == [0x00])
        #expect(PropertyBinaryEncoding.encode(.boolean(false)) == [0x01])
        #expect(PropertyBinaryEncoding.encode(.boolean(true)) == [0x02])
        #expect(PropertyBinaryEncoding.encode(.integer(0)) == [0x03, 0x00])
        #expect(PropertyBinaryEncoding.encode(.integer(-1)) == [0x03, 0x01])
        #expect(PropertyBinaryEncoding.encode(.integer(1)) == [0x03, 0x02])
        #expect(PropertyBinaryEncoding.encode(.integer(64)) == [0x03, 0x80, 0x01])
        #expect(PropertyBinaryEncoding.encode(.double(1.0)) == [0x04, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0])
        #expect(PropertyBinaryEncoding.encode(.string("hé")) == [0x05, 0x03, 0x68, 0xC3, 0xA9])
        #expect(PropertyBinaryEncoding.encode(.data([9, 8])) == [0x06, 0x02, 9, 8])
        #expect(PropertyBinaryEncoding.encode(.date(Timestamp(seconds: -1, nanoseconds: 300))) == [0x07, 0x01, 0xAC, 0x02])
        #expect(PropertyBinaryEncoding.encode(.url("a:b")) == [0x08, 0x03, 0x61, 0x3A, 0x62])
    }

    @Test func containerLayout() {
        #expect(PropertyBinaryEncoding.encode(.array([.null, .boolean(true)])) == [0x09, 0x02, 0x00, 0x02])
        #expect(PropertyBinaryEncoding.encode(.set([.boolean(false)])) == [0x0B, 0x01, 0x01])
        // Dictionary keys are written sorted, whatever the insertion order.
        #expect(PropertyBinaryEncoding.encode(.dictionary(["b": .null, "a": .boolean(true)]))
            == [0x0A, 0x02, 0x01, 0x61, 0x02, 0x01, 0x62, 0x00])
    }

    @Test func varintAndZigzag() throws {
        for (v, bytes): (UInt64, [UInt8]) in [
            (0, [0]), (1, [1]), (127, [0x7F]), (128, [0x80, 0x01]), (300, [0xAC, 0x02]),
            (UInt64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
        ] {
            #expect(varint(v) == bytes)
            var r = BinaryReader(bytes: bytes)
            #expect(try r.readVarint() == v)
            #expect(r.isAtEnd)
        }
        for i: Int64 in [0, -1, 1, -64, 63, 64, Int64.max, Int64.min, Int64.min + 1] {
            var w = BinaryWriter()
            w.writeZigzag(i)
            var r = BinaryReader(bytes: w.bytes)
            #expect(try r.readZigzag() == i)
        }
    }

    // MARK: - Round trips

    @Test func everyKindRoundTrips() throws {
        for v: PropertyValue in [
            .null, .boolean(true), .boolean(false),
            .integer(0), .integer(1), .integer(-1), .integer(Int64.max), .integer(Int64.min), .integer(Int64.min + 1),
            .double(0), .double(-0.0), .double(0.1), .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude),
            .double(.infinity), .double(-.infinity), .double(.nan), .double(-.nan), .double(.signalingNaN),
            .double(Double(bitPattern: 0x7FF0_0000_0000_0001)), .double(Double(bitPattern: 0xFFF8_DEAD_BEEF_0001)),
            .string(""), .string("ascii"), .string("é中😀🇫🇷𝄞\u{0}\u{FFFF}\u{10FFFF}"), .data([]), .data(Array(0...255)),
            .date(Timestamp(seconds: 0)), .date(Timestamp(seconds: -62_167_219_200, nanoseconds: 999_999_999)),
            .date(Timestamp(seconds: 253_402_300_799, nanoseconds: 0)), .date(Timestamp(seconds: -1, nanoseconds: 1)),
            .url(""), .url("https://example.com/ü"),
            .array([]), .set([]), .dictionary([:]), everyKindValue(),
        ] {
            try roundTrip(v)
        }
    }

    @Test func doubleBitPatternsAreKept() throws {
        let negZero = try PropertyBinaryEncoding.decode(PropertyBinaryEncoding.encode(.double(-0.0)))
        guard case .double(let z) = negZero else { Issue.record("not a double"); return }
        #expect(z.bitPattern == (-0.0 as Double).bitPattern)
        for bits: UInt64 in [0x7FF8_0000_0000_0000, 0x7FF0_0000_0000_0001, 0xFFF8_0000_0000_0000, 0x7FFF_FFFF_FFFF_FFFF, 0x7FF4_0000_0000_1234] {
            let v = try PropertyBinaryEncoding.decode(PropertyBinaryEncoding.encode(.double(Double(bitPattern: bits))))
            guard case .double(let d) = v else { Issue.record("not a double"); continue }
            #expect(d.isNaN)
            #expect(d.bitPattern == bits)
        }
    }

    @Test func randomValuesRoundTrip() throws {
        var g = XorShift64(seed: 42)
        for _ in 0..<2000 {
            try roundTrip(randomValue(&g, depth: 5))
        }
    }

    @Test func nestingUpToTheLimitRoundTrips() throws {
        var v = PropertyValue.array([])
        for _ in 1..<PropertyBinaryEncoding.maximumDepth { v = .array([v]) }
        try roundTrip(v)
        var d = PropertyValue.null
        for _ in 1..<PropertyBinaryEncoding.maximumDepth { d = .dictionary(["k": d]) }
        try roundTrip(d)
    }

    // MARK: - Hostile input

    @Test func emptyInputFails() {
        #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode([]) }
    }

    @Test func everyTruncationOfAValidEncodingFails() {
        let bytes = PropertyBinaryEncoding.encode(everyKindValue())
        #expect(bytes.count > 500)
        for n in 0..<bytes.count {
            #expect(throws: BinaryDecodingError.self, "first \(n) bytes") { try PropertyBinaryEncoding.decode(Array(bytes[0..<n])) }
        }
    }

    @Test func trailingBytesFail() {
        for v: PropertyValue in [.null, .integer(5), .string("x"), .array([])] {
            let e = #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(PropertyBinaryEncoding.encode(v) + [0x00]) }
            #expect(e?.message.contains("trailing") == true)
        }
    }

    @Test(arguments: [0x09, 0x0A, 0x0B, 0x05, 0x06, 0x08] as [UInt8])
    func hugeCountsFailWithoutAllocating(_ tag: UInt8) {
        for count: UInt64 in [1 << 60, UInt64.max, 1 << 32, 1_000_000, 3] {
            let bytes = [tag] + varint(count) + [0, 0]
            let e = #expect(throws: BinaryDecodingError.self, "count \(count)") { try PropertyBinaryEncoding.decode(bytes) }
            if count > 3 { #expect(e?.message.contains("exceeds") == true) }
        }
    }

    @Test(arguments: [0x0C, 0x0D, 0x10, 0x7F, 0x80, 0xFF] as [UInt8])
    func unknownTagsFail(_ tag: UInt8) {
        let e = #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode([tag]) }
        #expect(e?.message.contains("unknown value tag") == true)
        #expect(e?.offset == 0)
        let nested = #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode([0x09, 0x02, 0x00, tag]) }
        #expect(nested?.offset == 3)
    }

    @Test func overlongVarintsFail() throws {
        // 11 bytes with continuation bits.
        let eleven: [UInt8] = [0x03] + [UInt8](repeating: 0x80, count: 10) + [0x00]
        #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(eleven) }
        // 10 bytes whose last one has bits beyond 64.
        let overflow: [UInt8] = [0x03] + [UInt8](repeating: 0xFF, count: 9) + [0x02]
        #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(overflow) }
        // A 10-byte varint ending in 0x01 is the largest there is, and fine.
        let max: [UInt8] = [0x03] + [UInt8](repeating: 0xFF, count: 9) + [0x01]
        #expect(try PropertyBinaryEncoding.decode(max) == .integer(Int64.min))
        // Many continuation bytes as a length.
        let longLength: [UInt8] = [0x05] + [UInt8](repeating: 0x80, count: 100)
        #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(longLength) }
    }

    @Test func nestingBeyondTheLimitFails() {
        let max = PropertyBinaryEncoding.maximumDepth
        let ok = [UInt8]((0..<(max - 1)).flatMap { _ in [0x09, 0x01] as [UInt8] }) + [0x09, 0x00]
        #expect(throws: Never.self) { try PropertyBinaryEncoding.decode(ok) }
        let deep = [UInt8]((0..<max).flatMap { _ in [0x09, 0x01] as [UInt8] }) + [0x09, 0x00]
        let e = #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(deep) }
        #expect(e?.message.contains("nested") == true)
    }

    @Test func hostileNestingDoesNotOverflowTheStack() {
        let arrays = [UInt8]((0..<200_000).flatMap { _ in [0x09, 0x01] as [UInt8] })
        #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(arrays) }
        let dicts = [UInt8]((0..<100_000).flatMap { _ in [0x0A, 0x01, 0x01, 0x6B] as [UInt8] })
        #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(dicts) }
        let sets = [UInt8]((0..<100_000).flatMap { _ in [0x0B, 0x01] as [UInt8] })
        #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(sets) }
    }

    @Test(arguments: [
        [0x80], [0xC3], [0xC3, 0x28], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0x61, 0xFE],
    ] as [[UInt8]])
    func invalidUTF8Fails(_ raw: [UInt8]) throws {
        let len = UInt8(raw.count)
        #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode([0x05, len] + raw) }
        #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode([0x08, len] + raw) }
        // As a dictionary key.
        let e = #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode([0x0A, 0x01, len] + raw + [0x00]) }
        #expect(e?.message.contains("UTF-8") == true)
        // The same bytes are fine as data.
        #expect(try PropertyBinaryEncoding.decode([0x06, len] + raw) == .data(raw))
    }

    @Test func duplicateDictionaryKeysFail() {
        let bytes: [UInt8] = [0x0A, 0x02, 0x01, 0x61, 0x00, 0x01, 0x61, 0x02]
        let e = #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(bytes) }
        #expect(e?.message.contains("duplicate") == true)
    }

    @Test func truncatedDoubleFails() {
        for n in 0..<8 {
            let e = #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode([0x04] + [UInt8](repeating: 0, count: n)) }
            #expect(e?.message.contains("truncated") == true)
        }
    }

    @Test func dateNanosecondsOutOfRangeFail() throws {
        for nanos: UInt64 in [1_000_000_000, UInt64.max, 1 << 40] {
            let e = #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode([0x07, 0x00] + varint(nanos)) }
            #expect(e?.message.contains("nanoseconds") == true)
        }
        #expect(try PropertyBinaryEncoding.decode([0x07, 0x00] + varint(999_999_999)) == .date(Timestamp(seconds: 0, nanoseconds: 999_999_999)))
    }

    @Test func errorDescriptionNamesTheOffset() {
        let e = #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode([0x09, 0x01, 0x42]) }
        #expect(e?.offset == 2)
        #expect(e?.description == "malformed binary value at byte 2: unknown value tag 0x42")
    }

    // MARK: - Fuzz

    /// Decoding either throws, or gives a value whose encoding decodes to the same value.
    func checkDecodeIsConsistent(_ bytes: [UInt8]) -> String? {
        let v: PropertyValue
        do { v = try PropertyBinaryEncoding.decode(bytes) } catch { return nil }
        let canonical = PropertyBinaryEncoding.encode(v)
        guard let again = try? PropertyBinaryEncoding.decode(canonical) else { return "re-encoding of \(bytes) does not decode" }
        guard sameBits(again, v), PropertyBinaryEncoding.encode(again) == canonical else { return "\(bytes) is not stable" }
        return nil
    }

    @Test func fuzzRandomBytes() {
        var g = XorShift64(seed: 0xF00D)
        var decoded = 0
        var failures: [String] = []
        for i in 0..<5000 {
            var bytes = g.bytes(g.below(48))
            // Steer most inputs to a valid tag so decoding gets past the first byte.
            if !bytes.isEmpty && i % 4 != 0 { bytes[0] = UInt8(g.below(12)) }
            if (try? PropertyBinaryEncoding.decode(bytes)) != nil { decoded += 1 }
            if let f = checkDecodeIsConsistent(bytes) { failures.append(f) }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(decoded > 20)  // the fuzzer does reach successful decodes
    }

    @Test func fuzzMutationsOfValidEncodings() {
        var g = XorShift64(seed: 0xBADC0FFEE)
        var failures: [String] = []
        var decoded = 0
        for _ in 0..<4000 {
            var bytes = PropertyBinaryEncoding.encode(randomValue(&g, depth: 3))
            for _ in 0..<(1 + g.below(3)) {
                switch g.below(5) {
                case 0 where !bytes.isEmpty: bytes[g.below(bytes.count)] = g.byte()
                case 1 where !bytes.isEmpty: bytes[g.below(bytes.count)] ^= UInt8(1) << UInt8(g.below(8))
                case 2: bytes.insert(g.byte(), at: g.below(bytes.count + 1))
                case 3 where !bytes.isEmpty: bytes.remove(at: g.below(bytes.count))
                default: bytes = Array(bytes.prefix(g.below(bytes.count + 1)))
                }
            }
            if (try? PropertyBinaryEncoding.decode(bytes)) != nil { decoded += 1 }
            if let f = checkDecodeIsConsistent(bytes) { failures.append(f) }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(decoded > 100)
    }
}
