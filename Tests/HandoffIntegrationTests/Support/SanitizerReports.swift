import Foundation
import Testing

/// Reports of a sanitizer (`scripts/test --sanitize`) in the logs of the processes a test
/// started: handoffd, handoff-session and the rest write them to stderr, which is their log,
/// and a report there fails the test, even when everything it checked passed (a report in a
/// helper process, or a leak found at a daemon's exit, would otherwise go unseen). In an
/// ordinary build none of these lines is ever written.
enum SanitizerReports {
    static let markers = ["ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer"]

    /// Records an issue for each log under `directory` (or the file itself) with a report;
    /// whether there was one.
    @discardableResult
    static func check(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return false }
        let files = isDirectory.boolValue
            ? (FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".log") }.map { path + "/" + $0 } ?? [])
            : [path]
        var found = false
        for file in files {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8),
                  let marker = markers.first(where: text.contains), let start = text.range(of: marker) else { continue }
            let report = text[start.lowerBound...].prefix(6000)
            Issue.record(Comment(rawValue: "a sanitizer report in \(file):\n\(report)"))
            found = true
        }
        return found
    }
}
