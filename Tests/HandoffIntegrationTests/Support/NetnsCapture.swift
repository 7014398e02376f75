import Foundation
import HandoffTestSupport

/// What a third host on the network sees: packet captures (tshark) and avahi settings.
extension NetnsRun {
    /// The run's state directory in scripts/netns (per host: avahi.conf, addresses).
    var stateDirectory: String { (exitDirectory as NSString).deletingLastPathComponent }

    /// Sets `key=value` in `host`'s avahi-daemon.conf and restarts its avahi-daemon.
    func setAvahi(_ host: String, _ key: String, _ value: String) async throws {
        let path = "\(stateDirectory)/\(host)/avahi.conf"
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let changed = lines.map { $0.hasPrefix(key + "=") ? "\(key)=\(value)" : String($0) }.joined(separator: "\n")
        try changed.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try await CommandLineTool.run("/bin/bash", [NetnsRun.script, "avahi-restart", name, host], environment: environment)
        guard r.status == 0 else { throw TestFailure("avahi-restart failed: \(r)") }
    }

    /// Starts tshark on `host`'s interface with a capture `filter`; returns once it captures.
    func capture(on host: String, filter: String, seconds: Int, to pcap: String) async throws -> Int32 {
        let log = "\(directory)/tshark-\(host).log"
        let pid = try await spawn(host, log: log, ["tshark", "-i", "hnd0", "-f", filter, "-w", pcap, "-a", "duration:\(seconds)", "-q"])
        try await eventually(15, "tshark to capture") {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("Capturing on")
        }
        return pid
    }

    /// Starts tshark on `host`'s interface for mDNS only; returns once it captures.
    func captureMDNS(on host: String, seconds: Int, to pcap: String) async throws -> Int32 {
        let log = "\(directory)/tshark-\(host).log"
        let pid = try await spawn(host, log: log, ["tshark", "-i", "hnd0", "-f", "udp port 5353", "-w", pcap, "-a", "duration:\(seconds)", "-q"])
        try await eventually(15, "tshark to capture") {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("Capturing on")
        }
        return pid
    }

    /// Fields of the mDNS responses in `pcap` sent from `source` (IPv4): one array per
    /// packet, each field's values split at tshark's commas.
    static func mdnsResponses(in pcap: String, from source: String, fields: [String]) async throws -> [[String: [String]]] {
        let r = try await CommandLineTool.run("/usr/bin/tshark", [
            "-r", pcap, "-Y", "mdns && dns.flags.response == 1 && ip.src == \(source)", "-T", "fields", "-E", "separator=|",
        ] + fields.flatMap { ["-e", $0] }, environment: ProcessInfo.processInfo.environment)
        guard r.status == 0 else { throw TestFailure("tshark -r failed: \(r)") }
        return r.stdout.split(separator: "\n").map { line in
            let values = line.split(separator: "|", omittingEmptySubsequences: false)
            var packet: [String: [String]] = [:]
            for (i, f) in fields.enumerated() where i < values.count {
                packet[f] = values[i].split(separator: ",").map(String.init)
            }
            return packet
        }
    }
}
