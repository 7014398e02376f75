import HandoffCore

/// `--expires 10m` (s, m, h, d from now) or an RFC 3339 date.
enum ExpiryArgument {
    static func parse(_ text: String, now: Timestamp) throws -> Timestamp {
        if let t = Timestamp(rfc3339: text) { return t }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let unit = text.last, let mult = units[unit], let n = Int64(text.dropLast()), n > 0, n < 100 * 365 * 86_400 {
            return now.adding(nanoseconds: n * mult * 1_000_000_000)
        }
        throw CommandFailure(description: "--expires \"\(text)\" must be a duration such as 30s, 10m, 2h, 1d, or an RFC 3339 date", status: ExitStatus.usage)
    }
}
