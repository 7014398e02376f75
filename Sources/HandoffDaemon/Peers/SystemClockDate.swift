#if canImport(FoundationEssentials)
import FoundationEssentials  // Date alone: full Foundation would load ICU (Docs/Performance.md)
#else
import Foundation
#endif

/// swift-certificates takes Foundation dates for validity; this is the one place that
/// needs them.
enum SystemClockDate {
    static func now() -> Date { Date() }
}
