import HandoffCore
import Logging

/// What the endpoint refused, logged without letting a flood of strangers flood the
/// journal: of each kind (each message), the first `perWindow` of each 10 s are logged one
/// by one, the rest counted and said in one line when that kind comes again after the window.
struct RefusalLog {
    let perWindow = 10
    let window: Int64 = 10_000_000_000
    private struct Kind {
        var start: Timestamp
        var logged = 0
        var held = 0
    }
    private var kinds: [String: Kind] = [:]

    mutating func refused(_ message: Logger.Message, _ metadata: Logger.Metadata, at now: Timestamp, _ log: Logger) {
        let key = message.description
        var kind = kinds[key] ?? Kind(start: now)
        if now >= kind.start.adding(nanoseconds: window) {
            if kind.held > 0 { log.info("and more like it, not logged one by one", metadata: ["what": "\(key)", "count": "\(kind.held)"]) }
            kind = Kind(start: now)
        }
        if kind.logged < perWindow {
            kind.logged += 1
            log.info(message, metadata: metadata)
        } else {
            kind.held += 1
        }
        kinds[key] = kind
    }
}
