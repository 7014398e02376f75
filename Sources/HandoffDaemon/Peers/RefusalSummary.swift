import NIOCore

/// What the log says about refused peer connections: the first refusal after a quiet
/// spell at once, then one summary per `interval` while refusals go on, never one line
/// per connection (a flood would otherwise fill the journal). A pure state machine: the
/// caller logs the lines it returns and calls `intervalEnded` when asked to.
struct RefusalSummary {
    let interval: TimeAmount
    /// Distinct sources counted by name in one interval; the rest are "others".
    let namedSources: Int

    /// Why a connection was turned away: refused at accept, or a pending one closed to
    /// make room for a connection from a source holding fewer.
    enum Reason: Hashable, Comparable, Sendable {
        case refused(PeerAdmission.Refusal)
        case evicted

        var text: String {
            switch self {
            case .refused(let r): r.rawValue
            case .evicted: "evicted to make room for other addresses"
            }
        }
    }

    private var counts: [Reason: Int] = [:]
    private var bySource: [PeerSource: Int] = [:]
    private var otherSources = 0
    private var windowOpen = false
    private var lastWindowHadRefusals = false

    init(interval: TimeAmount = .seconds(10), namedSources: Int = 256) {
        self.interval = interval
        self.namedSources = namedSources
    }

    enum Action: Equatable {
        case none
        /// Log `line`, and call `intervalEnded` after `interval`.
        case logAndStartInterval(String)
    }

    mutating func refused(_ reason: Reason, from source: PeerSource) -> Action {
        counts[reason, default: 0] += 1
        if bySource[source] != nil || bySource.count < namedSources {
            bySource[source, default: 0] += 1
        } else {
            otherSources += 1
        }
        guard !windowOpen else { return .none }
        windowOpen = true
        // The opening line stands for this one refusal; the summary counts the rest.
        counts = [:]
        bySource = [:]
        otherSources = 0
        return .logAndStartInterval("refusing peer connections from \(source) (\(reason.text)); further refusals are summed up every \(interval.nanoseconds / 1_000_000_000) s")
    }

    /// The interval is over: the summary line, if anything was refused in it, and whether
    /// to call again after another interval (only while refusals go on: idle costs nothing).
    mutating func intervalEnded() -> (line: String?, again: Bool) {
        let total = counts.values.reduce(0, +)
        defer {
            counts = [:]
            bySource = [:]
            otherSources = 0
        }
        guard total > 0 else {
            windowOpen = false
            return (nil, false)
        }
        let reasons = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key.text)" }.joined(separator: ", ")
        let top = bySource.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key.description < $1.key.description }.prefix(3)
        var sources = top.map { "\($0.key) (\($0.value))" }
        let rest = bySource.count - top.count
        if rest > 0 { sources.append("\(rest) more address\(rest == 1 ? "" : "es")") }
        if otherSources > 0 { sources.append("\(otherSources) from addresses not counted one by one") }
        let seconds = interval.nanoseconds / 1_000_000_000
        return ("refused \(total) peer connection\(total == 1 ? "" : "s") in the last \(seconds) s: \(reasons); from \(sources.joined(separator: ", "))", true)
    }
}
