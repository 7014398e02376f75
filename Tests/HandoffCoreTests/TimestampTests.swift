import HandoffCore
import Testing

@Suite("Timestamp")
struct TimestampTests {
    // 2026-11-21T10:00:00Z
    static let base: Int64 = 1_795_255_200

    // MARK: - Formatting

    @Test func epoch() {
        #expect(Timestamp(seconds: 0).rfc3339 == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(seconds: 0).description == "1970-01-01T00:00:00.000Z")
    }

    @Test func knownDate() {
        #expect(Timestamp(seconds: Self.base).rfc3339 == "2026-11-21T10:00:00.000Z")
        #expect(Timestamp(seconds: 951_782_400).rfc3339 == "2000-02-29T00:00:00.000Z")
        #expect(Timestamp(seconds: 1_709_164_800).rfc3339 == "2024-02-29T00:00:00.000Z")
        #expect(Timestamp(seconds: 253_402_300_799).rfc3339 == "9999-12-31T23:59:59.000Z")
    }

    @Test(arguments: [
        (0, "000"), (1, "000000001"), (120_000_000, "120"), (123_000_000, "123"), (100_000_000, "100"),
        (123_456_000, "123456"), (123_450_000, "123450"), (123_456_789, "123456789"), (120_000_001, "120000001"),
        (999_999_999, "999999999"), (1_000, "000001"), (1_000_000, "001"), (10, "000000010"),
    ] as [(Int32, String)])
    func fractionInGroupsOfThree(_ nanos: Int32, _ fraction: String) {
        #expect(Timestamp(seconds: Self.base, nanoseconds: nanos).rfc3339 == "2026-11-21T10:00:00.\(fraction)Z")
    }

    @Test func preEpochFormatting() {
        #expect(Timestamp(seconds: -1).rfc3339 == "1969-12-31T23:59:59.000Z")
        #expect(Timestamp(seconds: -1, nanoseconds: 500_000_000).rfc3339 == "1969-12-31T23:59:59.500Z")
        #expect(Timestamp(seconds: -86_400).rfc3339 == "1969-12-31T00:00:00.000Z")
        #expect(Timestamp(seconds: -86_401).rfc3339 == "1969-12-30T23:59:59.000Z")
        #expect(Timestamp(seconds: -62_135_596_800).rfc3339 == "0001-01-01T00:00:00.000Z")
        #expect(Timestamp(seconds: -62_167_219_200).rfc3339 == "0000-01-01T00:00:00.000Z")
    }

    // MARK: - Parsing

    @Test func parsesZulu() throws {
        let t = try #require(Timestamp(rfc3339: "2026-11-21T10:00:00Z"))
        #expect(t == Timestamp(seconds: Self.base))
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00z") == t)
        #expect(Timestamp(rfc3339: "2026-11-21t10:00:00Z") == t)
        #expect(Timestamp(rfc3339: "2026-11-21 10:00:00Z") == t)
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.000Z") == t)
    }

    @Test func parsesOffsets() {
        let t = Timestamp(seconds: Self.base)
        #expect(Timestamp(rfc3339: "2026-11-21T15:30:00+05:30") == t)
        #expect(Timestamp(rfc3339: "2026-11-21T05:00:00-05:00") == t)
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00+00:00") == t)
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00-00:00") == t)
        // Offsets that cross a day boundary.
        #expect(Timestamp(rfc3339: "2026-11-22T09:59:00+23:59") == t)
        #expect(Timestamp(rfc3339: "2026-11-20T10:01:00-23:59") == t)
        #expect(Timestamp(rfc3339: "2026-11-21T01:00:00.5-09:00") == Timestamp(seconds: Self.base, nanoseconds: 500_000_000))
        #expect(Timestamp(rfc3339: "2026-11-21T15:30:00+05:30")?.rfc3339 == "2026-11-21T10:00:00.000Z")
    }

    @Test func fractionDigits() {
        let s = Self.base
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.1Z") == Timestamp(seconds: s, nanoseconds: 100_000_000))
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.12Z") == Timestamp(seconds: s, nanoseconds: 120_000_000))
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.000001Z") == Timestamp(seconds: s, nanoseconds: 1_000))
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.123456789Z") == Timestamp(seconds: s, nanoseconds: 123_456_789))
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.000000001Z") == Timestamp(seconds: s, nanoseconds: 1))
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.999999999+01:00") == Timestamp(seconds: s - 3600, nanoseconds: 999_999_999))
    }

    @Test func tenFractionDigitsAreRefusedNotRounded() {
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.1234567890Z") == nil)
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.0000000000Z") == nil)
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.9999999999Z") == nil)
    }

    @Test func leapYears() {
        #expect(Timestamp(rfc3339: "2024-02-29T00:00:00Z") == Timestamp(seconds: 1_709_164_800))
        #expect(Timestamp(rfc3339: "2000-02-29T12:00:00Z") != nil)
        #expect(Timestamp(rfc3339: "1600-02-29T12:00:00Z") != nil)
        #expect(Timestamp(rfc3339: "2026-02-29T00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "1900-02-29T00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "2100-02-29T00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "2024-02-30T00:00:00Z") == nil)
    }

    @Test(arguments: [
        "2026-02-30T00:00:00Z", "2026-04-31T00:00:00Z", "2026-06-31T00:00:00Z", "2026-09-31T00:00:00Z",
        "2026-11-31T00:00:00Z", "2026-01-32T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z",
        "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z", "2026-01-01T23:59:61Z",
        "2026-01-01T23:59:99Z",
    ])
    func invalidDatesAreRejected(_ text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test(arguments: [
        "", "2026-11-21", "2026-11-21T10:00:00", "2026-11-21T10:00Z", "2026-11-21T10:00:00.Z", "26-11-21T10:00:00Z",
        "2026/11/21T10:00:00Z", "2026-11-21X10:00:00Z", "2026-11-21T10:00:00+0530", "2026-11-21T10:00:00+05",
        "2026-11-21T10:00:00+5:30", "2026-11-21T10:00:00+24:00", "2026-11-21T10:00:00+05:60", "2026-11-21T10:00:00 Z",
        "2026-11-21T10:00:00ZZ", "2026-11-21T10:00:00Z ", " 2026-11-21T10:00:00Z", "2026-1-21T10:00:00Z",
        "2026-11-21T1:00:00Z", "+2026-11-21T10:00:00Z", "-2026-11-21T10:00:00Z", "20260-11-21T10:00:00Z",
        "2026-11-21T10:00:00,5Z", "2026-11-21T10:00:00.5.5Z", "２０２６-11-21T10:00:00Z", "2026-11-21T10:00:00UTC",
        "2026-11-21T10:00:00.-5Z", "2026-11-21T10:00:00Z+01:00",
    ])
    func malformedTextIsRejected(_ text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test func leapSecondFoldsIntoTheNextMinute() {
        #expect(Timestamp(rfc3339: "2016-12-31T23:59:60Z") == Timestamp(rfc3339: "2017-01-01T00:00:00Z"))
    }

    @Test func preEpochParsing() {
        #expect(Timestamp(rfc3339: "1969-12-31T23:59:59Z") == Timestamp(seconds: -1))
        #expect(Timestamp(rfc3339: "1969-12-31T23:59:59.5Z") == Timestamp(seconds: -1, nanoseconds: 500_000_000))
        #expect(Timestamp(rfc3339: "0001-01-01T00:00:00Z") == Timestamp(seconds: -62_135_596_800))
        #expect(Timestamp(rfc3339: "1900-01-01T00:00:00Z") == Timestamp(seconds: -2_208_988_800))
    }

    // MARK: - Round trips

    @Test(arguments: [
        Timestamp(seconds: 0), Timestamp(seconds: -1, nanoseconds: 1), Timestamp(seconds: -1, nanoseconds: 999_999_999),
        Timestamp(seconds: -86_400, nanoseconds: 123_456_789), Timestamp(seconds: -2_208_988_800, nanoseconds: 120_000_000),
        Timestamp(seconds: -62_135_596_800), Timestamp(seconds: -62_167_219_200, nanoseconds: 5),
        Timestamp(seconds: 253_402_300_799, nanoseconds: 999_999_999), Timestamp(seconds: 4_102_444_800),
        Timestamp(seconds: 1_795_255_200, nanoseconds: 123_456), Timestamp(seconds: 951_868_799),
    ])
    func formatThenParseIsExact(_ t: Timestamp) {
        #expect(Timestamp(rfc3339: t.rfc3339) == t, "\(t.rfc3339)")
    }

    @Test func randomTimestampsRoundTrip() {
        var g = XorShift64(seed: 1234)
        let lo: Int64 = -62_167_219_200, hi: Int64 = 253_402_300_799  // 0000-01-01 ... 9999-12-31
        var failures: [String] = []
        for _ in 0..<20_000 {
            let t = Timestamp(seconds: lo + Int64(g.next() % UInt64(hi - lo + 1)), nanoseconds: Int32(g.below(1_000_000_000)))
            if Timestamp(rfc3339: t.rfc3339) != t { failures.append("\(t.seconds).\(t.nanoseconds) -> \(t.rfc3339)") }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    @Test func everyDayOfSomeYearsRoundTrips() {
        for year: Int64 in [1600, 1900, 1969, 1970, 2000, 2024, 2100] {
            let start = Timestamp(rfc3339: "\(year)-01-01T00:00:00Z")!
            let days = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 366 : 365
            for d in 0..<Int64(days) {
                let t = Timestamp(seconds: start.seconds + d * 86_400 + 43_200)
                #expect(Timestamp(rfc3339: t.rfc3339) == t)
                #expect(t.rfc3339.hasPrefix("\(year)-"))
            }
            let next = Timestamp(seconds: start.seconds + Int64(days) * 86_400)
            #expect(next.rfc3339 == "\(year + 1)-01-01T00:00:00.000Z")
        }
    }

    // MARK: - Arithmetic and order

    @Test func validatingInit() {
        #expect(Timestamp(validatingSeconds: 5, nanoseconds: 999_999_999) == Timestamp(seconds: 5, nanoseconds: 999_999_999))
        #expect(Timestamp(validatingSeconds: 5, nanoseconds: 1_000_000_000) == nil)
        #expect(Timestamp(validatingSeconds: 5, nanoseconds: -1) == nil)
        #expect(Timestamp(validatingSeconds: -5, nanoseconds: 0) == Timestamp(seconds: -5))
    }

    @Test func ordering() {
        let a = Timestamp(seconds: -1, nanoseconds: 999_999_999)
        let b = Timestamp(seconds: 0)
        let c = Timestamp(seconds: 0, nanoseconds: 1)
        #expect(a < b && b < c && a < c)
        #expect(!(b < b))
        #expect([c, a, b].sorted() == [a, b, c])
    }

    @Test func addingNanoseconds() {
        let t = Timestamp(seconds: 10, nanoseconds: 500_000_000)
        #expect(t.adding(nanoseconds: 0) == t)
        #expect(t.adding(nanoseconds: 500_000_000) == Timestamp(seconds: 11))
        #expect(t.adding(nanoseconds: 1_600_000_000) == Timestamp(seconds: 12, nanoseconds: 100_000_000))
        #expect(t.adding(nanoseconds: -500_000_001) == Timestamp(seconds: 9, nanoseconds: 999_999_999))
        #expect(t.adding(nanoseconds: -2_700_000_000) == Timestamp(seconds: 7, nanoseconds: 800_000_000))
        #expect(Timestamp(seconds: 0).adding(nanoseconds: -1) == Timestamp(seconds: -1, nanoseconds: 999_999_999))
    }

    @Test func nanosecondsUntil() {
        let a = Timestamp(seconds: 10, nanoseconds: 900_000_000)
        let b = Timestamp(seconds: 12, nanoseconds: 100_000_000)
        #expect(a.nanoseconds(until: b) == 1_200_000_000)
        #expect(b.nanoseconds(until: a) == -1_200_000_000)
        #expect(a.nanoseconds(until: a) == 0)
        var g = XorShift64(seed: 77)
        for _ in 0..<1000 {
            let x = Timestamp(seconds: Int64(g.below(2_000_000)) - 1_000_000, nanoseconds: Int32(g.below(1_000_000_000)))
            let d = Int64(g.below(4_000_000_000_000)) - 2_000_000_000_000
            #expect(x.nanoseconds(until: x.adding(nanoseconds: d)) == d)
        }
    }

    @Test func nanosecondsUntilSaturatesForHugeIntervals() {
        let far = Timestamp(seconds: Int64.max / 2)
        let past = Timestamp(seconds: Int64.min / 2)
        #expect(Timestamp(seconds: 0).nanoseconds(until: far) == Int64.max)
        #expect(Timestamp(seconds: 0).nanoseconds(until: past) == Int64.min)
        #expect(far.nanoseconds(until: Timestamp(seconds: 0)) == Int64.min)
    }

    @Test func nanosecondsUntilSaturatesInTheRightDirectionWhenSecondsOverflow() {
        // Int64.max - Int64.min overflows; the true interval is hugely positive.
        let lo = Timestamp(seconds: Int64.min)
        let hi = Timestamp(seconds: Int64.max)
        #expect(lo.nanoseconds(until: hi) == Int64.max)
        #expect(hi.nanoseconds(until: lo) == Int64.min)
    }

    @Test func nanosecondsUntilNearTheSaturationEdgeDoesNotTrap() async {
        // 9_223_372_036 s * 1e9 fits in Int64, but adding 999_999_999 ns does not.
        await #expect(processExitsWith: .success) {
            let t = Timestamp(seconds: 0).nanoseconds(until: Timestamp(seconds: 9_223_372_036, nanoseconds: 999_999_999))
            precondition(t == Int64.max)
        }
    }

    // MARK: - Extremes reachable from the wire

    @Test func formattingExtremeSecondsDoesNotTrap() async {
        // The binary decoder accepts any Int64 seconds for a date (a peer could send this),
        // so formatting one as RFC 3339 for the JSON API must not crash the daemon.
        await #expect(processExitsWith: .success) {
            _ = Timestamp(seconds: Int64.max).rfc3339
        }
        await #expect(processExitsWith: .success) {
            _ = Timestamp(seconds: Int64.min).rfc3339
        }
    }

    @Test func datesOutsideFourDigitYearsAreNotRepresentable() throws {
        // RFC 3339 writes four-digit years, so dates must lie in 0000...9999: outside it a
        // Timestamp is not representable, the binary decoder refuses it, and validation too.
        let y10000 = Timestamp(seconds: 253_402_300_800)
        let yMinus1 = Timestamp(seconds: -62_167_219_201)
        #expect(!y10000.isRepresentable && !yMinus1.isRepresentable)
        #expect(Timestamp(seconds: 253_402_300_799, nanoseconds: 999_999_999).isRepresentable)
        #expect(Timestamp(seconds: -62_167_219_200).isRepresentable)
        for t in [y10000, yMinus1] {
            _ = t.rfc3339  // formatting never traps
            #expect(Timestamp(validatingSeconds: t.seconds, nanoseconds: 0) == nil)
            #expect(throws: BinaryDecodingError.self) { try PropertyBinaryEncoding.decode(PropertyBinaryEncoding.encode(.date(t))) }
        }
        // An offset can push a four-digit year out of range: refused, not wrapped.
        #expect(Timestamp(rfc3339: "0000-01-01T00:00:00+01:00") == nil)
        #expect(Timestamp(rfc3339: "9999-12-31T23:59:59-01:00") == nil)
        #expect(Timestamp(rfc3339: "0000-01-01T00:00:00Z") == Timestamp(seconds: -62_167_219_200))
    }
}
