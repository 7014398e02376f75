import Foundation
@testable import HandoffClient
import Testing

/// The checks doctor makes of the installation itself, on made-up home and system folders:
/// units from the package enabled for every user, a user's mask, and a daemon of another
/// version than this handoffctl.
@Suite struct DoctorInstallChecksTests {
    let fm = FileManager.default

    func tree(_ build: (String) throws -> Void) throws -> (home: String, system: String) {
        let root = try TestEnvironment.makeTemporaryDirectory()
        let home = root + "/home", system = root + "/sys"
        try fm.createDirectory(atPath: home, withIntermediateDirectories: true)
        try fm.createDirectory(atPath: system + "/usr/lib/systemd/user", withIntermediateDirectories: true)
        for u in ["handoffd.service", "handoffd.socket"] {
            fm.createFile(atPath: system + "/usr/lib/systemd/user/" + u, contents: Data())
        }
        try build(root)
        return (home, system)
    }

    @Test func unitsEnabledForEveryUserByThePackageAreEnabled() throws {
        let (home, system) = try tree { root in
            try fm.createDirectory(atPath: root + "/sys/etc/systemd/user/sockets.target.wants", withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: root + "/sys/etc/systemd/user/sockets.target.wants/handoffd.socket",
                                      withDestinationPath: root + "/sys/usr/lib/systemd/user/handoffd.socket")
        }
        defer { try? fm.removeItem(atPath: (home as NSString).deletingLastPathComponent) }
        let check = Doctor.unitsCheck(home: home, system: system)
        #expect(check.status == .ok, "\(check)")
        #expect(check.detail.contains("/usr/lib/systemd/user"), "\(check)")
    }

    @Test func installedButNotEnabledSaysHowToEnable() throws {
        let (home, system) = try tree { _ in }
        defer { try? fm.removeItem(atPath: (home as NSString).deletingLastPathComponent) }
        let check = Doctor.unitsCheck(home: home, system: system)
        #expect(check.status == .warning && check.fix == "systemctl --user enable --now handoffd.socket", "\(check)")
    }

    @Test func aUsersMaskWinsOverTheGlobalEnablement() throws {
        let (home, system) = try tree { root in
            try fm.createDirectory(atPath: root + "/sys/etc/systemd/user/sockets.target.wants", withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: root + "/sys/etc/systemd/user/sockets.target.wants/handoffd.socket",
                                      withDestinationPath: root + "/sys/usr/lib/systemd/user/handoffd.socket")
            try fm.createDirectory(atPath: root + "/home/.config/systemd/user", withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: root + "/home/.config/systemd/user/handoffd.socket", withDestinationPath: "/dev/null")
        }
        defer { try? fm.removeItem(atPath: (home as NSString).deletingLastPathComponent) }
        let check = Doctor.unitsCheck(home: home, system: system)
        #expect(check.status == .warning && check.detail.contains("masked"), "\(check)")
        #expect(check.fix?.contains("systemctl --user unmask handoffd.socket") == true, "\(check)")
    }

    @Test func nothingInstalledNamesThePackage() throws {
        let root = try TestEnvironment.makeTemporaryDirectory()
        defer { try? fm.removeItem(atPath: root) }
        let check = Doctor.unitsCheck(home: root, system: root)
        #expect(check.status == .warning && check.fix?.contains("apt install") == true, "\(check)")
    }

    @Test func aDaemonOfAnotherVersionAsksForARestart() {
        #expect(Doctor.staleDaemon(running: "0.1.0", installed: "0.1.0") == nil)
        let stale = Doctor.staleDaemon(running: "0.1.0", installed: "0.2.0")
        #expect(stale?.status == .warning)
        #expect(stale?.detail.contains("handoffd 0.1.0 is running, but handoffctl is 0.2.0") == true, "\(String(describing: stale))")
        #expect(stale?.fix == "systemctl --user restart handoffd")
    }
}
