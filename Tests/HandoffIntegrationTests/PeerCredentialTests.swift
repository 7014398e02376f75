import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

/// The control socket serves only the daemon's own uid (SO_PEERCRED), even when the file
/// permissions would let another user in.
@Suite struct PeerCredentialTests {
    @Test(.enabled(if: TestEnvironment.isRoot, "needs root to run a child as another uid"))
    func anotherUserIsRefused() async throws {
        let daemon = try await DaemonProcess().start()
        // Open the path up so only the kernel's credential check stands in the way.
        chmod(daemon.directory, 0o755)
        chmod(daemon.directory + "/run", 0o755)
        chmod(daemon.directory + "/run/handoff", 0o755)
        chmod(daemon.socketPath, 0o666)
        let curl = "/usr/bin/curl"
        guard FileManager.default.isExecutableFile(atPath: curl) else {
            throw TestFailure("curl is needed for this test (scripts/test installs it)")
        }
        let r = try await CommandLineTool.run(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", curl, "-s", "-w", "\\n%{http_code}",
                                 "--unix-socket", daemon.socketPath, "http://localhost/v1/status"],
            environment: ["PATH": "/usr/bin:/bin"])
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.last == "403", "\(r)")
        #expect(r.stdout.contains("\"forbidden\""), "\(r)")
        #expect(!r.stdout.contains("test-device"), "no daemon data may leak: \(r)")
        #expect(daemon.log().contains("refused a control connection from another user"))
        // The owner still gets in.
        let mine = try await CommandLineTool.run(curl, ["-s", "--unix-socket", daemon.socketPath, "http://localhost/v1/status"], environment: [:])
        #expect(mine.stdout.contains("test-device"))
    }

    @Test func socketAndDirectoryArePrivate() async throws {
        let daemon = try await DaemonProcess().start()
        var st = stat()
        #expect(stat(daemon.socketPath, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(stat(daemon.directory + "/run/handoff", &st) == 0)
        #expect(st.st_mode & 0o777 == 0o700)
    }
}
