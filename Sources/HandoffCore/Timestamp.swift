/// A point in time with nanosecond precision, kept as whole seconds and nanoseconds
/// since 1970-01-01T00:00:00Z so that it survives every encoding exactly
/// (a Double would lose the last digits of a fraction).
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var seconds: Int64
    /// 0 ..< 1_000_000_000
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        precondition((0..<1_000_000_000).contains(nanoseconds), "nanoseconds out of range")
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// Nil when `nanoseconds` is out of range or the date is not `isRepresentable`.
    public init?(validatingSeconds seconds: Int64, nanoseconds: Int64) {
        guard (0..<1_000_000_000).contains(nanoseconds) else { return nil }
        self.init(seconds: seconds, nanoseconds: Int32(nanoseconds))
        guard isRepresentable else { return nil }
    }

    /// 0000-01-01T00:00:00Z through 9999-12-31T23:59:59.999999999Z: the dates RFC 3339
    /// can write, and so the only ones activities may carry.
    public static let representableSeconds: ClosedRange<Int64> = -62_167_219_200...253_402_300_799

    public var isRepresentable: Bool { Timestamp.representableSeconds.contains(seconds) }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }

    public func adding(nanoseconds delta: Int64) -> Timestamp {
        let total = Int64(nanoseconds) + delta % 1_000_000_000
        var s = seconds + delta / 1_000_000_000
        var n = total
        if n < 0 { n += 1_000_000_000; s -= 1 }
        if n >= 1_000_000_000 { n -= 1_000_000_000; s += 1 }
        return Timestamp(seconds: s, nanoseconds: Int32(n))
    }

    /// Nanoseconds from `self` to `other`, saturating at Int64's bounds.
    public func nanoseconds(until other: Timestamp) -> Int64 {
        let forward = other >= self
        let (ds, o1) = other.seconds.subtractingReportingOverflow(seconds)
        if o1 { return forward ? .max : .min }
        let (dsn, o2) = ds.multipliedReportingOverflow(by: 1_000_000_000)
        if o2 { return forward ? .max : .min }
        let (total, o3) = dsn.addingReportingOverflow(Int64(other.nanoseconds) - Int64(nanoseconds))
        if o3 { return forward ? .max : .min }
        return total
    }

    public var description: String { rfc3339 }
}

// MARK: - RFC 3339

extension Timestamp {
    /// UTC with the fraction in groups of three digits: `2026-11-21T23:30:48.120Z`.
    /// Whole seconds still get `.000` so every timestamp reads alike.
    public var rfc3339: String {
        // Floor division and remainder that cannot overflow, even at Int64.min.
        var days = seconds / 86_400
        var secOfDay = seconds % 86_400
        if secOfDay < 0 { days -= 1; secOfDay += 86_400 }
        let (y, m, d) = Timestamp.civil(fromDays: days)
        var fraction = String(nanoseconds)
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.count > 3 && fraction.hasSuffix("000") { fraction.removeLast(3) }
        func pad(_ v: Int64, _ n: Int) -> String {
            let s = String(v)
            return s.count >= n ? s : String(repeating: "0", count: n - s.count) + s
        }
        let year = y < 0 ? "-" + pad(-y, 4) : pad(y, 4)
        return "\(year)-\(pad(m, 2))-\(pad(d, 2))T\(pad(secOfDay / 3600, 2)):\(pad(secOfDay / 60 % 60, 2)):\(pad(secOfDay % 60, 2)).\(fraction)Z"
    }

    /// Parses RFC 3339 (`T` or space, `Z` or a numeric offset, up to 9 fraction digits).
    public init?(rfc3339 text: String) {
        let b = Array(text.utf8)
        var i = 0
        func number(_ count: Int) -> Int64? {
            guard i + count <= b.count else { return nil }
            var v: Int64 = 0
            for k in 0..<count {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            i += count
            return v
        }
        func expect(_ chars: String) -> Bool {
            guard i < b.count, chars.utf8.contains(b[i]) else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
              let second = number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Timestamp.daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 61  // 60 tolerated for leap seconds; folded into the next minute
        else { return nil }
        var nanos: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                guard digits < 9 else { return nil }  // more precision than we can keep: refuse, don't round
                nanos = nanos * 10 + Int64(b[i] - 48)
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanos *= 10 }
        }
        var offset: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = number(2), expect(":"), let om = number(2), oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = Timestamp.days(fromCivil: year, month, day)
        self.init(seconds: days * 86_400 + hour * 3600 + minute * 60 + second - offset, nanoseconds: Int32(nanos))
        guard isRepresentable else { return nil }  // an offset pushed it past year 0000 or 9999
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
