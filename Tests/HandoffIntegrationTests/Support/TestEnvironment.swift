import Foundation
import HandoffTestSupport

/// Where the built binaries are, and fresh temporary directories for each test.
enum TestEnvironment {
    /// `$HANDOFF_BIN_DIR`, else `.build/debug` of this package.
    static let binDirectory: String = {
        if let d = ProcessInfo.processInfo.environment["HANDOFF_BIN_DIR"], !d.isEmpty { return d }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug").path
    }()

    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }

    static func binary(_ name: String) throws -> String {
        let path = binDirectory + "/" + name
        // handoff-browser-host is handoff-session by that name, a link that scripts/swift-env's
        // link_programs makes; a plain `swift build` does not. Made here by any test that
        // wants it: a race ends with the same link.
        if name == "handoff-browser-host", !FileManager.default.fileExists(atPath: path),
           FileManager.default.isExecutableFile(atPath: binDirectory + "/handoff-session") {
            _ = symlink("handoff-session", path)
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestFailure("\(path) is missing: run `swift build` before the tests (scripts/test does)")
        }
        return path
    }

    /// A new private directory under /tmp, short enough for socket paths (108 bytes).
    static func makeTemporaryDirectory() throws -> String {
        var template = Array("/tmp/hot.XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        return String(cString: p)
    }

    static var isRoot: Bool { getuid() == 0 }

    /// Debian's library folder for this machine's architecture (/usr/lib/x86_64-linux-gnu).
    static var multiarchLibrary: String {
        #if arch(x86_64)
        "/usr/lib/x86_64-linux-gnu"
        #elseif arch(arm64)
        "/usr/lib/aarch64-linux-gnu"
        #else
        "/usr/lib"
        #endif
    }
}

