// handoff-history: the activity history's helper process. handoffd starts it when the
// history is first needed and ends it (by closing its input) after a quiet minute, so
// that the always-running daemon never loads what SQLite through GRDB needs (full
// Foundation, ICU). Usage, by handoffd only:
//   handoff-history --directory STATE_DIR --retention-days N
// Requests on standard input, replies on standard output, one JSON line each
// (Sources/HandoffHistoryProtocol/HistoryHelperMessage.swift); log lines on standard error, which is
// handoffd's, so they reach the journal.
import HandoffCore
import HandoffHistory
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `<N>handoff-history: message key=value` on stderr, as journald reads it (sd-daemon(3)).
struct HelperLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let priority = switch event.level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
        var line = "<\(priority)>handoff-history: \(event.message)"
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }).sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\"\(value)\""
        }
        line += "\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    }
}

func fail(_ message: String) -> Never {
    _ = "handoff-history: \(message)\n".utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    exit(2)
}

/// The helper, as the one executable starts it when it is called by that name.
public enum HistoryProgram {
    /// Never returns: it ends when handoffd closes its input, or fails.
    public static func main(_ arguments: [String]) -> Never {
        var directory: String?
        var retentionDays: Int64?
        var arguments = arguments[...]
        while let flag = arguments.popFirst() {
            switch flag {
            case "--directory": directory = arguments.popFirst()
            case "--retention-days": retentionDays = arguments.popFirst().flatMap { Int64($0) }
            default: fail("unknown argument \(flag); this helper is started by handoffd (--directory DIR --retention-days N)")
            }
        }
        guard let directory, let retentionDays, retentionDays > 0 else {
            fail("usage: handoff-history --directory STATE_DIR --retention-days N (N > 0); it is started by handoffd")
        }

        // A reply written to a handoffd that went away must end the helper, not kill it by signal.
        signal(SIGPIPE, SIG_IGN)
        let logger = Logger(label: "handoff-history") { _ in HelperLogHandler() }
        let database: HistoryDatabase
        do {
            database = try HistoryDatabase(directory: directory, retentionDays: retentionDays, logger: logger)
        } catch {
            fail("cannot open the history in \(directory): \(error)")
        }
        // The retention holds at every start: whatever is older goes before the first answer.
        database.expire()
        let helper = HistoryHelper(database: database)
        while let line = readLine(strippingNewline: true) {
            let reply = helper.answer(Array(line.utf8))
            var sent = 0
            while sent < reply.count {
                let n = reply.withUnsafeBufferPointer { write(1, $0.baseAddress! + sent, $0.count - sent) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { exit(0) }  // handoffd is gone
                sent += n
            }
        }
        exit(0)
    }
}
