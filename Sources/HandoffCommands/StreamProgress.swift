import NIOConcurrencyHelpers
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The progress line `continue --stream-to` draws on a terminal's stderr: bytes, rate and,
/// when the origin announced its size, percent and ETA. Redrawn at most 10 times a second.
final class StreamProgress: Sendable {
    private let total: Int64?
    private let enabled: Bool
    private let state = NIOLockedValueBox((bytes: Int64(0), lastDraw: NIODeadline.uptimeNanoseconds(0), drawn: false))
    private let started = NIODeadline.now()

    init(total: Int64?, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    func add(_ n: Int) { update { $0 += Int64(n) } }

    /// The count handoffd reports when it writes the file itself.
    func set(_ total: Int64) { update { $0 = total } }

    private func update(_ change: (inout Int64) -> Void) {
        let line: String? = state.withLockedValue { s in
            change(&s.bytes)
            let now = NIODeadline.now()
            guard enabled, now - s.lastDraw >= .milliseconds(100) else { return nil }
            s.lastDraw = now
            s.drawn = true
            return render(s.bytes, now: now)
        }
        if let line { draw(line) }
    }

    var bytes: Int64 { state.withLockedValue { $0.bytes } }

    /// Draws the final figures and moves to the next line.
    func finish() {
        guard enabled else { return }
        let bytes = state.withLockedValue { $0.bytes }
        draw(render(bytes, now: .now()) + "\n")
    }

    /// Leaves the line so an error message starts on its own.
    func abandon() {
        if enabled && state.withLockedValue({ $0.drawn }) { draw("\n") }
    }

    private func render(_ bytes: Int64, now: NIODeadline) -> String {
        let seconds = max(Double((now - started).nanoseconds) / 1e9, 0.001)
        let rate = Double(bytes) / seconds
        var text = StreamProgress.size(Double(bytes))
        if let total, total > 0 {
            let fraction = min(1, Double(bytes) / Double(total))
            let width = 24
            let filled = Int(fraction * Double(width))
            text = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
                + "\(Int(fraction * 100))% " + text + " / " + StreamProgress.size(Double(total))
            let remaining = rate > 0 ? Double(total - bytes) / rate : 0
            text += "  " + StreamProgress.size(rate) + "/s  ETA " + StreamProgress.clock(remaining)
        } else {
            text += "  " + StreamProgress.size(rate) + "/s"
        }
        return text
    }

    private func draw(_ line: String) {
        // \r and clear-to-end: redraw in place.
        let bytes = Array(("\r\u{1B}[K" + line).utf8)
        bytes.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    static func size(_ n: Double) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = n
        var i = 0
        while v >= 1024 && i < units.count - 1 {
            v /= 1024
            i += 1
        }
        return i == 0 ? "\(Int(v)) B" : String(Int(v * 10) / 10) + "." + String(Int(v * 10) % 10) + " " + units[i]
    }

    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600):" + pad(s / 60 % 60) + ":" + pad(s % 60) : "\(s / 60):" + pad(s % 60)
    }

    private static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
