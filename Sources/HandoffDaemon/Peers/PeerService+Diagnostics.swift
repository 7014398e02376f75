import HandoffAvahi
import HandoffCore
import HandoffControlAPI
import NIOCore
import NIOSSL

#if canImport(Glibc)
import Glibc
#endif

/// What handoffd itself can tell `handoffctl doctor` (Docs/LocalAPI.md §21): discovery,
/// the interfaces mDNS would use, each trusted workstation and why it is not linked,
/// clocks, identity and state files.
extension PeerService {
    func diagnostics(stateDirectory: String) async -> [DiagnosticCheck] {
        var checks: [DiagnosticCheck] = []
        let now = clock.now()
        // The key must be the certificate's, or every handshake fails.
        let certificateKey = try? identity.certificate.extractPublicKey().toSPKIBytes()
        checks.append(certificateKey != Array(identity.signingKey.publicKey.derRepresentation)
            ? DiagnosticCheck("identity", .failed, "Device identity", "the private key in \(stateDirectory) is not the certificate's: no other workstation can connect",
                              fix: "handoffctl pair --new-identity (the old files are kept aside, a new identity is made, then pairing starts)")
            : identity.replaced.map {
                DiagnosticCheck("identity", .warning, "Device identity", "this workstation is \(identity.deviceID) (\(deviceName)); \($0)",
                                fix: "your other workstations trusted the old identity: on one of them, remove the old device (handoffctl devices remove OLD-ID), then pair this one again (handoffctl pair)")
            } ?? DiagnosticCheck("identity", .ok, "Device identity", "this workstation is \(identity.deviceID) (\(deviceName)); its key matches its certificate"))
        let own = identity.deviceID
        if let removal = await accountDevices().removed.first(where: { $0.id == own.description }) {
            let by = removal.removedBy.map { " by \($0.name.nonEmpty ?? String($0.id.prefix(7)))" } ?? ""
            let when = removal.removedAt.map { " on \($0.rfc3339.prefix(10))" } ?? ""
            checks.append(DiagnosticCheck("account", .failed, "Account",
                                          "this workstation was removed from your account\(by)\(when): your other workstations no longer trust it, and a removal is final",
                                          fix: "handoffctl pair --new-identity (a new identity for this workstation, the old one kept aside; then run handoffctl pair on one of your others)"))
        }
        if let problem = trust.loadProblem {
            checks.append(DiagnosticCheck("trust", .failed, "Trusted devices", problem,
                                          fix: "restore the kept file as trusted-devices.json (then restart handoffd), or pair your workstations again"))
        } else {
            checks.append(DiagnosticCheck("trust", .ok, "Trusted devices", "\(trust.all.count) trusted, \(account.membership.members.count) in the account"))
        }
        // Files handoffd could not read were kept aside: say so once.
        let aside = PeerService.keptAside(in: stateDirectory)
        checks.append(aside.isEmpty
            ? DiagnosticCheck("state-files", .ok, "State files", "every file in \(stateDirectory) was readable")
            : DiagnosticCheck("state-files", .warning, "State files", "kept aside because they could not be read: \(aside.joined(separator: ", "))",
                              fix: "look at them, then delete them: rm \(aside.map { "'\(stateDirectory)/\($0)'" }.joined(separator: " "))"))
        checks.append(PeerService.stateSpace(stateDirectory))
        checks.append(historyCheck())
        switch discovery {
        case .running:
            checks.append(DiagnosticCheck("discovery", .ok, "mDNS (avahi-daemon)", "advertising and browsing through avahi-daemon on port \(listenPort)"))
        case .unavailable(let why):
            checks.append(DiagnosticCheck("discovery", settings.discovery ? .failed : .warning, "mDNS (avahi-daemon)", why,
                                          fix: settings.discovery ? PeerService.avahiFix() : "remove --no-discovery (or discovery = no) to find peers by mDNS"))
        }
        checks += interfaceChecks()
        checks.append(sleepCheck())
        for entry in trust.all.sorted(by: { $0.id < $1.id }) {
            checks.append(peerCheck(entry.id, name: entry.name, now: now))
            if let link = links[entry.id], let skew = link.clockSkewSeconds {
                let name = link.deviceName
                checks.append(abs(skew) > 60
                    ? DiagnosticCheck("clock.\(entry.id)", .warning, "Clock of \(name)", "\(name)'s clock is \(abs(skew).fixedPoint(digits: 0)) s \(skew > 0 ? "ahead of" : "behind") this one's; expiry and history times will disagree",
                                      fix: "turn on time sync on both: sudo timedatectl set-ntp true")
                    : DiagnosticCheck("clock.\(entry.id)", .ok, "Clock of \(name)", "within \(abs(skew).fixedPoint(digits: 1)) s of this one"))
            }
        }
        if trust.all.isEmpty {
            checks.append(DiagnosticCheck("peers", .warning, "Your workstations", "this workstation trusts no other yet",
                                          fix: "run `handoffctl pair` here and on your other workstation"))
        }
        return checks
    }

    private func peerCheck(_ id: DeviceID, name: String, now: Timestamp) -> DiagnosticCheck {
        let known = name.nonEmpty ?? links[id]?.deviceName.nonEmpty ?? devices[id]?.name.nonEmpty
        let shown = known ?? String(id.description.prefix(7))
        if let link = links[id] {
            return DiagnosticCheck("peer.\(id)", .ok, "Workstation \(shown)", "connected at \(link.remoteAddress)")
        }
        let records = services.values.filter { $0.deviceID == id || ($0.deviceID == nil && !$0.isSelf) }
        let seenAt = services.values.filter { $0.deviceID == id }
        if let failing = seenAt.first(where: { $0.lastError != nil }) ?? records.first(where: { $0.lastError != nil && $0.isStatic }) {
            return DiagnosticCheck("peer.\(id)", .failed, "Workstation \(shown)",
                                   "not connected; the last try at \(failing.service.address) port \(failing.service.port): \(failing.lastError!.description)",
                                   fix: "check that handoffd runs there (`handoffctl status` on \(shown)) and that its peer port is open")
        }
        if seenAt.contains(where: { !$0.isLastLink }) {
            return DiagnosticCheck("peer.\(id)", .warning, "Workstation \(shown)", "seen on the network but not connected yet; retrying",
                                   fix: "wait a few seconds, then run `handoffctl doctor` again")
        }
        let seen = devices[id]?.lastSeen.map { "last connected \($0.rfc3339)" } ?? "never connected"
        return DiagnosticCheck("peer.\(id)", .failed, "Workstation \(shown)",
                               "not seen on the network (\(seen)): it is off, on another network, or mDNS does not reach it",
                               fix: "if it is on another subnet or a VPN: `handoffctl trust \(id) --address HOST:PORT` or peer = HOST:PORT in handoffd.conf")
    }

    /// Whether the current offer is handed on before this workstation sleeps (LocalAPI.md §22).
    func sleepCheck() -> DiagnosticCheck {
        switch sleepGuard {
        case .guarded:
            return DiagnosticCheck("sleep", .ok, "Sleep", "the session agent holds logind's delay lock: before this workstation sleeps, its offer goes to the others to keep")
        case .unguarded(let why):
            return DiagnosticCheck("sleep", .warning, "Sleep", "sleep is not guarded: \(why); an offer made here sleeps with this workstation",
                                   fix: "nothing to do on a machine that never sleeps; elsewhere, check that systemd-logind runs and polkitd is installed (sudo apt install polkitd)")
        case .unknown:
            return DiagnosticCheck("sleep", .warning, "Sleep", "no session agent guards sleep: an offer made here sleeps with this workstation",
                                   fix: "systemctl --user start handoff-session (in your graphical session)")
        }
    }

    /// Interfaces that are up: mDNS needs multicast on at least one with an address.
    private func interfaceChecks() -> [DiagnosticCheck] {
        var out: [DiagnosticCheck] = []
        var byName: [String: NetworkWatch.InterfaceEntry] = [:]
        for e in NetworkWatch.interfaces() where e.isUpAndNotLoopback { byName[e.name] = e }
        var usable = 0
        for (name, e) in byName.sorted(by: { $0.key < $1.key }) {
            let addresses = network.addresses.filter { $0.interfaceIndex == e.index }.map(\.address).sorted()
            if e.flags & NetworkWatch.InterfaceEntry.multicast == 0 {
                out.append(DiagnosticCheck("interface.\(name)", .warning, "Interface \(name)", "multicast is off here, so mDNS cannot work on it",
                                           fix: "sudo ip link set \(name) multicast on"))
            } else if addresses.isEmpty {
                out.append(DiagnosticCheck("interface.\(name)", .warning, "Interface \(name)", "up, but without an address"))
            } else {
                usable += 1
                let wifi = name.hasPrefix("wl") ? "; on Wi-Fi, an access point that isolates clients (guest networks do) hides workstations from each other" : ""
                out.append(DiagnosticCheck("interface.\(name)", .ok, "Interface \(name)", "multicast on, \(addresses.joined(separator: ", "))\(wifi)"))
            }
        }
        if usable == 0 {
            out.append(DiagnosticCheck("interfaces", .failed, "Network", "no interface is up with an address and multicast: nothing can be found",
                                       fix: "connect to a network"))
        }
        return out
    }

    /// What to run when avahi-daemon does not answer: install it where it is missing (the
    /// package only recommends it), else start it.
    static func avahiFix(daemon: String = "/usr/sbin/avahi-daemon") -> String {
        access(daemon, X_OK) == 0
            ? "sudo systemctl enable --now avahi-daemon"
            : "sudo apt install avahi-daemon (it is not installed)"
    }

    /// Whether the state directory can take a save: the current activity, trust, pairing
    /// and restoration state are refused (`not_saved`) when it cannot.
    static func stateSpace(_ directory: String) -> DiagnosticCheck {
        var fs = statvfs()
        guard statvfs(directory, &fs) == 0 else {
            return DiagnosticCheck("state-space", .failed, "State directory", "\(directory) cannot be examined: \(AtomicFile.errnoText())",
                                   fix: "check that it exists and belongs to you")
        }
        let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
        guard access(directory, W_OK) == 0 else {
            return DiagnosticCheck("state-space", .failed, "State directory", "\(directory) is not writable: handoffd cannot save activities, trust or state",
                                   fix: "make it yours and writable: chmod u+rwx '\(directory)'")
        }
        // Every save is a few KiB to 1 MiB (the largest activity); below 1 MiB some fail.
        if free < 1 << 20 || fs.f_favail == 0 {
            return DiagnosticCheck("state-space", .failed, "State directory",
                                   "the file system of \(directory) is full (\(free >> 10) KiB free): making an activity current, trusting and saving state are refused",
                                   fix: "free some space on that file system")
        }
        if let (path, error) = StateWriter.shared.lastFailure {
            return DiagnosticCheck("state-space", .failed, "State directory",
                                   "\(path) could not be saved (\(error)): what handoffd holds in memory would be lost at a restart",
                                   fix: "check the disk (dmesg, the file system's health); the next change saves it again")
        }
        return DiagnosticCheck("state-space", .ok, "State directory", "\(free >> 20) MiB free in \(directory)")
    }

    static func keptAside(in directory: String) -> [String] {
        var out: [String] = []
        for dir in [directory, directory + "/restoration"] {
            for name in AtomicFile.names(in: dir) where name.contains(".unreadable") || name.hasSuffix(".corrupt") {
                out.append(dir == directory ? name : "restoration/" + name)
            }
        }
        return out.sorted()
    }


    /// The history's helper is a separate executable: a missing one would otherwise show
    /// only at the first search.
    func historyCheck() -> DiagnosticCheck {
        guard let history else {
            return DiagnosticCheck("history", .ok, "Activity history", "off (history-days = 0 in handoffd.conf)")
        }
        guard access(history.helperPath, X_OK) == 0 else {
            return DiagnosticCheck("history", .failed, "Activity history", "its helper \(history.helperPath) is missing, so nothing is recorded and searches fail",
                                   fix: "reinstall handoff (the package puts handoff-history in /usr/libexec/handoff, scripts/install next to handoffd)")
        }
        return DiagnosticCheck("history", .ok, "Activity history", "kept for \(history.retentionDays) days by \(history.helperPath), started when needed")
    }
}
