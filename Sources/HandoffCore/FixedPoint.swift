extension Double {
    /// Rounded to `digits` digits after the point, as printf's "%.Nf" writes it (halves
    /// away from zero, never "-0"), for the figures messages show, without Foundation's
    /// `String(format:)`, which would load full Foundation and ICU into the daemon.
    public func fixedPoint(digits: Int) -> String {
        guard isFinite else { return "\(self)" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(self) * scale).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9e18 else { return "\(self)" }
        let units = Int64(scaled)
        let divisor = Int64(scale)
        var text = "\(units / divisor)"
        if digits > 0 {
            let fraction = "\(units % divisor)"
            text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
        }
        return self < 0 && units != 0 ? "-" + text : text
    }
}
