import Foundation

/// swift-certificates takes Foundation dates for validity; this is the one place that
/// needs them.
enum SystemClockDate {
    static func now() -> Date { Date() }
}
