import Foundation
import HandoffTestSupport

/// Debian's own kdeconnectd on a host of a NetnsRun: headless (QT_QPA_PLATFORM=offscreen),
/// on a session bus of its own (no service files: nothing is bus-activated behind the
/// test's back), its configuration in the run's directory. Driven through its D-Bus API
/// (gdbus) and kdeconnect-cli, as a user's desktop drives it.
struct KDEConnectHost {
    let net: NetnsRun
    let host: String
    let name: String
    /// An X display (Xvfb on the same host) for kdeconnectd's clipboard; nil: offscreen.
    var display: String?

    var base: String { "\(net.directory)/kde-\(host)" }
    var busPath: String { "\(base)/run/bus" }
    var busAddress: String { "unix:path=\(busPath)" }
    var logPath: String { "\(net.directory)/kdeconnectd-\(host).log" }
    var monitorPath: String { "\(net.directory)/kdeconnect-monitor-\(host).log" }

    static var daemonPath: String? {
        let candidates = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? [])
            .map { "/usr/lib/\($0)/libexec/kdeconnectd" } + ["/usr/libexec/kdeconnectd"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    var environment: [String: String] {
        ["HOME": "\(base)/home", "XDG_CONFIG_HOME": "\(base)/config", "XDG_DATA_HOME": "\(base)/data", "XDG_CACHE_HOME": "\(base)/cache",
         "XDG_RUNTIME_DIR": "\(base)/run", "DBUS_SESSION_BUS_ADDRESS": busAddress, "QT_QPA_PLATFORM": display == nil ? "offscreen" : "xcb",
         "QT_LOGGING_RULES": "kdeconnect.*=true", "DISPLAY": display ?? "", "WAYLAND_DISPLAY": ""]
    }

    /// Starts its session bus, a monitor of the bus's signals, and kdeconnectd; returns when
    /// kdeconnectd answers on the bus.
    static func start(_ net: NetnsRun, on host: String, name: String, display: String? = nil) async throws -> KDEConnectHost {
        guard let daemon = daemonPath else { throw TestFailure("kdeconnectd is not installed (package kdeconnect: scripts/install-deps)") }
        let k = KDEConnectHost(net: net, host: host, name: name, display: display)
        for d in ["home", "config/kdeconnect", "data", "cache", "run"] {
            try FileManager.default.createDirectory(atPath: "\(k.base)/\(d)", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        try "[General]\nname=\(name)\n".write(toFile: "\(k.base)/config/kdeconnect/config", atomically: true, encoding: .utf8)
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:path=\(k.busPath)</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
            """.write(toFile: "\(k.base)/session.conf", atomically: true, encoding: .utf8)
        _ = try await net.spawn(host, log: "\(net.directory)/session-bus-\(host).log",
                                ["dbus-daemon", "--config-file", "\(k.base)/session.conf", "--nofork", "--nopidfile", "--nosyslog"])
        try await eventually(10, "the session bus of \(host)") { FileManager.default.fileExists(atPath: k.busPath) }
        _ = try await net.spawn(host, log: k.monitorPath, ["gdbus", "monitor", "--address", k.busAddress, "--dest", "org.kde.kdeconnect"])
        // In its own directory: 22.12 writes shared text to a file in its working directory.
        _ = try await net.spawn(host, log: k.logPath, ["env", "-C", k.base, daemon], environment: k.environment)
        try await eventually(20, "kdeconnectd on \(host) to answer on its bus") {
            (try? await k.selfID()).map { !$0.isEmpty } ?? false
        }
        return k
    }

    /// Limited broadcast (255.255.255.255, where kdeconnectd sends its identity) needs a
    /// route; a run's hosts have only their subnet's.
    static func routeBroadcast(_ net: NetnsRun, _ hosts: [String]) async throws {
        for h in hosts {
            let r = try await net.exec(h, ["ip", "route", "replace", "255.255.255.255/32", "dev", "hnd0"])
            guard r.status == 0 else { throw TestFailure("no broadcast route on \(h): \(r)") }
        }
    }

    func call(_ path: String, _ method: String, _ args: [String] = []) async throws -> String {
        let r = try await CommandLineTool.run("/usr/bin/gdbus", ["call", "--address", busAddress, "--dest", "org.kde.kdeconnect",
                                                                 "--object-path", path, "--method", method] + args,
                                              environment: ProcessInfo.processInfo.environment)
        guard r.status == 0 else { throw TestFailure("gdbus \(method) on \(host): \(r)") }
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func selfID() async throws -> String {
        let out = try await call("/modules/kdeconnect", "org.kde.kdeconnect.daemon.selfId")
        return out.split(separator: "'").dropFirst().first.map(String.init) ?? ""
    }

    func device(_ id: String) -> String { "/modules/kdeconnect/devices/\(id)" }

    func isTrusted(_ id: String) async throws -> Bool {
        try await call(device(id), "org.kde.kdeconnect.device.isTrusted") == "(true,)"
    }

    func isReachable(_ id: String) async -> Bool {
        let r = try? await CommandLineTool.run("/usr/bin/gdbus", ["call", "--address", busAddress, "--dest", "org.kde.kdeconnect", "--object-path", device(id),
                                                                  "--method", "org.freedesktop.DBus.Properties.Get", "org.kde.kdeconnect.device", "isReachable"],
                                               environment: ProcessInfo.processInfo.environment)
        return r?.stdout.contains("true") ?? false
    }

    /// The verification key kdeconnectd shows, as handoff shows it: 22.12 gives the whole
    /// hex digest as bytes, of which its UI shows the first 8 characters.
    func verificationKey(_ id: String) async throws -> String {
        let out = try await call(device(id), "org.kde.kdeconnect.device.verificationKey")
        let bytes = out.split(separator: ",").compactMap { part -> UInt8? in
            guard let r = part.range(of: "0x") else { return nil }
            return UInt8(part[r.upperBound...].prefix(2), radix: 16)
        }
        return String(decoding: bytes.prefix(8), as: UTF8.self)
    }

    func cli(_ args: [String]) async throws -> CommandResult {
        try await net.exec(host, ["env"] + environment.map { "\($0.key)=\($0.value)" } + ["kdeconnect-cli"] + args)
    }

    var monitor: String { (try? String(contentsOfFile: monitorPath, encoding: .utf8)) ?? "" }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}
