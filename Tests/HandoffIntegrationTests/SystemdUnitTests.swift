import Foundation
import Testing

/// The shipped units pass `systemd-analyze --user verify` (scripts/dev/verify-units).
@Suite struct SystemdUnitTests {
    @Test func unitsVerify() async throws {
        let script = TestEnvironment.packageRoot + "/scripts/dev/verify-units"
        let r = try await CommandLineTool.run("/bin/bash", [script, try TestEnvironment.binary("handoffd")],
                                              environment: ProcessInfo.processInfo.environment)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("verify-units: ok"), "\(r)")
    }

    @Test func unitsSayWhatTheyMust() throws {
        let service = try String(contentsOfFile: TestEnvironment.packageRoot + "/systemd/handoffd.service", encoding: .utf8)
        let socketUnit = try String(contentsOfFile: TestEnvironment.packageRoot + "/systemd/handoffd.socket", encoding: .utf8)
        #expect(service.contains("Type=notify"))
        #expect(service.contains("Restart=on-failure"))
        // RuntimeDirectory= would delete the socket unit's file when the service stops.
        let settings = service.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(!settings.contains { $0.hasPrefix("RuntimeDirectory=") })
        #expect(socketUnit.contains("ListenStream=%t/handoff/handoffd.sock"))
        #expect(socketUnit.contains("SocketMode=0600"))
        #expect(socketUnit.contains("DirectoryMode=0700"))
        // Stopping the socket (logout, removing the package) leaves no dead socket file.
        #expect(socketUnit.contains("RemoveOnStop=yes"))
    }

    /// The service's hardening (Security.md, 3.2 and 3.3): each directive stays, or the
    /// threat model's claims that rest on it change with it.
    @Test func theServiceKeepsItsHardening() throws {
        let service = try String(contentsOfFile: TestEnvironment.packageRoot + "/systemd/handoffd.service", encoding: .utf8)
        let settings = Set(service.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
        for directive in ["UMask=0077", "NoNewPrivileges=yes", "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK",
                          "RestrictNamespaces=yes", "LockPersonality=yes", "MemoryDenyWriteExecute=yes", "RestrictRealtime=yes",
                          "RestrictSUIDSGID=yes", "SystemCallArchitectures=native", "SystemCallFilter=@system-service"] {
            #expect(settings.contains(directive), "handoffd.service lost \(directive)")
        }
    }

    @Test func sessionAgentLivesInTheGraphicalSession() throws {
        let unit = try String(contentsOfFile: TestEnvironment.packageRoot + "/systemd/handoff-session.service", encoding: .utf8)
        #expect(unit.contains("PartOf=graphical-session.target"))
        #expect(unit.contains("WantedBy=graphical-session.target"))
        // Stopping the agent must not kill the apps it opened.
        #expect(unit.contains("KillMode=process"))
    }
}
