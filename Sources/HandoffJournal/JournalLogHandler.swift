import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Log lines on stderr as journald reads them best: a `<N>` syslog priority prefix
/// (sd-daemon(3)), no timestamp of our own, metadata as `key=value`.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    let label: String
    /// Before each message: a helper writing to handoffd's stderr names itself, since the
    /// journal credits every line of that stream to handoffd.
    let prefix: String

    public init(label: String, level: Logger.Level, prefix: String = "") {
        self.label = label
        self.logLevel = level
        self.prefix = prefix
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let priority: Int
        switch event.level {
        case .trace, .debug: priority = 7
        case .info: priority = 6
        case .notice: priority = 5
        case .warning: priority = 4
        case .error: priority = 3
        case .critical: priority = 2
        }
        var line = "<\(priority)>\(prefix)\(event.message)"
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        for key in all.keys.sorted() {
            let value = "\(all[key]!)"
            line += value.contains(" ") || value.isEmpty ? " \(key)=\"\(value)\"" : " \(key)=\(value)"
        }
        line += "\n"
        // One write(2) per line, so lines from several threads never interleave.
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
