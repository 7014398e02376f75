import Foundation

/// A new, empty directory under the system's temporary folder, its name starting with
/// `prefix`: the caller removes it.
public func makeTemporaryDirectory(_ prefix: String) throws -> String {
    let dir = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}
