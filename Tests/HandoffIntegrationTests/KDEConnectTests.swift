import Foundation
import HandoffControlAPI
import HandoffCore
import HandoffTestSupport
import Testing

/// handoff's KDE Connect endpoint against KDE's own daemon: Debian 12's kdeconnectd
/// (kdeconnect 22.12, protocol 7) on host k, handoffd on a (with KDE Connect turned on)
/// and b, a and b paired as an account. Root only.
extension WorkstationTests {
@Suite struct KDEConnectTests {
    static func status(_ net: NetnsRun, _ host: String) async throws -> KDEConnectStatus {
        let r = try await net.ctl(host, "kdeconnect", "list", "--json")
        guard r.status == 0 else { throw TestFailure("kdeconnect list on \(host): \(r)") }
        return KDEConnectStatus(json: try JSONValue(parsing: Array(r.stdout.utf8)))
    }

    static func device(_ net: NetnsRun, _ host: String, _ id: String) async throws -> KDEConnectDevice? {
        try await status(net, host).devices.first { $0.id == id }
    }

    /// a (KDE Connect on) and b paired, kdeconnectd on k linked to a (on an X display
    /// there, Xvfb's, when given).
    static func setUp(_ net: NetnsRun, display: String? = nil) async throws -> (k: KDEConnectHost, ours: String, theirs: String) {
        try await KDEConnectHost.routeBroadcast(net, ["a", "b", "k"])
        try await net.startDaemon("a")
        try await net.startDaemon("b")
        try await net.pair("a", "b")
        let on = try await net.ctl("a", "kdeconnect", "on")
        #expect(on.status == 0 && on.stdout.contains("KDE Connect is on: listening on TCP 1716"), "\(on)")
        let ours = try #require(try await status(net, "a").deviceID)
        let k = try await KDEConnectHost.start(net, on: "k", name: "kde-k", display: display)
        let theirs = try await k.selfID()
        try await eventually(20, "a and kdeconnectd to link") {
            let linked = try await device(net, "a", theirs)?.reachable ?? false
            return linked
        }
        try await eventually(10, "kdeconnectd to see a") { await k.isReachable(ours) }
        return (k, ours, theirs)
    }

    @Test func aPageAndTextSharedFromKDEConnectAreContinuedOnAnotherWorkstation() async throws {
        try await NetnsRun.with(["a", "b", "k"]) { net in
            let (k, ours, theirs) = try await Self.setUp(net)
            let linked = try #require(try await Self.device(net, "a", theirs))
            #expect(linked.name == "kde-k" && linked.protocolVersion == 7 && !linked.paired)

            // Pairing asked on kdeconnectd's side; the key a shows is kdeconnectd's.
            _ = try await k.call(k.device(ours), "org.kde.kdeconnect.device.requestPair")
            try await eventually(10, "a to hear the pairing request") {
                try await Self.device(net, "a", theirs)?.pairing == "requested-by-peer"
            }
            let asked = try #require(try await Self.device(net, "a", theirs))
            let keyThere = try await k.verificationKey(ours)
            #expect(asked.verificationKey == keyThere && keyThere.count == 8, "a shows \(asked.verificationKey ?? "nil"), kdeconnectd \(keyThere)")
            let listed = try await net.ctl("a", "kdeconnect", "list")
            #expect(listed.stdout.contains("asks to pair, key \(keyThere)"), "\(listed)")
            let accept = try await net.ctl("a", "kdeconnect", "accept", "kde-k")
            #expect(accept.status == 0 && accept.stdout.contains("Paired with kde-k"), "\(accept)")
            try await eventually(10, "kdeconnectd to trust a") { try await k.isTrusted(ours) }
            #expect(try await Self.device(net, "a", theirs)?.paired == true)

            // A page shared from kdeconnectd is a's current activity, and b continues it.
            let url = "https://example.org/from-kde-\(UInt32.random(in: 0...UInt32.max))"
            let share = try await k.cli(["-d", ours, "--share", url])
            #expect(share.status == 0, "\(share)")
            try await eventually(10, "the page to become a's current activity") {
                try await net.ctl("a", "current", "--json").stdout.contains(url)
            }
            var continued = ""
            try await eventually(15, "b to continue the page") {
                continued = try await net.ctl("b", "continue", "--print", "--json").stdout
                return continued.contains(url)
            }
            #expect(continued.contains(WellKnownActivityType.browsingWeb) && continued.contains("Shared from kde-k"), "\(continued)")

            // So is text, as a handoff.text activity.
            let text = "text from kde \(UInt32.random(in: 0...UInt32.max))"
            #expect(try await k.cli(["-d", ours, "--share-text", text]).status == 0)
            try await eventually(15, "b to continue the text") {
                continued = try await net.ctl("b", "continue", "--print", "--json").stdout
                return continued.contains(text)
            }
            #expect(continued.contains(WellKnownActivityType.text), "\(continued)")
        }
    }

    @Test func pairingFromHandoffAndContinueOnReachKDEConnect() async throws {
        try await NetnsRun.with(["a", "b", "k"]) { net in
            let (k, ours, theirs) = try await Self.setUp(net)
            // Sending before pairing is refused, and says what to do.
            let early = try await net.ctl("a", "continue", "--on", "kde-k")
            #expect(early.status != 0 && early.stderr.contains("is not paired"), "\(early)")

            let pair = try await net.ctl("a", "kdeconnect", "pair", theirs)
            #expect(pair.status == 0 && pair.stdout.contains("Asked kde-k to pair"), "\(pair)")
            let keyHere = try #require(try await Self.device(net, "a", theirs)?.verificationKey)
            try await eventually(10, "kdeconnectd to hear the request") {
                try await k.call(k.device(ours), "org.kde.kdeconnect.device.hasPairingRequests") == "(true,)"
            }
            #expect(try await k.verificationKey(ours) == keyHere)
            _ = try await k.call(k.device(ours), "org.kde.kdeconnect.device.acceptPairing")
            try await eventually(10, "a to be paired with kdeconnectd") { try await Self.device(net, "a", theirs)?.paired == true }

            // The newest activity of the account is b's: continue --on on a sends its page.
            _ = try await net.ctl("a", "become-current", "--type", "test.older", "--webpage-url", "https://example.org/older")
            try await Task.sleep(nanoseconds: 50_000_000)
            let url = "https://example.org/newest-\(UInt32.random(in: 0...UInt32.max))"
            #expect(try await net.ctl("b", "become-current", "--type", "test.newer", "--webpage-url", url).status == 0)
            try await eventually(10, "a to be offered b's activity") { try await net.ctl("a", "list", "--json").stdout.contains(url) }
            let sent = try await net.ctl("a", "continue", "--on", "kde-k")
            #expect(sent.status == 0 && sent.stdout.contains("sent \(url) to kde-k"), "\(sent)")
            try await eventually(10, "kdeconnectd's share plugin to receive the page") {
                k.monitor.contains("shareReceived ('\(url)',)")
            }

            // Text goes as text.
            let text = "some text \(UInt32.random(in: 0...UInt32.max))"
            let made = try await net.ctl("a", "become-current", "--type", WellKnownActivityType.text, "--info", "text=\(text)")
            #expect(made.status == 0, "\(made)")
            let sentText = try await net.ctl("a", "continue", "--on", theirs, "--json")
            #expect(sentText.status == 0 && sentText.stdout.contains(text), "\(sentText)")
            // kdeconnect 22.12 writes shared text to a file it names in shareReceived.
            var received = ""
            try await eventually(10, "kdeconnectd to receive the text") {
                let files = k.monitor.split(separator: "\n").compactMap { line -> String? in
                    guard line.contains("shareReceived"), let r = line.range(of: "kdeconnect-"), line.contains(".txt") else { return nil }
                    let start = line[..<r.lowerBound].lastIndex(of: "'").map { line.index(after: $0) } ?? r.lowerBound
                    return String(line[start...].prefix { $0 != "'" })
                }
                received = files.compactMap { f in
                    try? String(contentsOfFile: f.hasPrefix("/") ? f : k.base + "/" + f, encoding: .utf8)
                }.joined(separator: "|")
                return received.contains(text)
            }

            // Unpaired on kdeconnectd's side: a forgets it; sending is refused again.
            _ = try await k.call(k.device(ours), "org.kde.kdeconnect.device.unpair")
            try await eventually(10, "a to see the unpairing") { try await Self.device(net, "a", theirs)?.paired == false }
            let after = try await net.ctl("a", "continue", "--on", "kde-k")
            #expect(after.status != 0, "\(after)")
        }
    }

    @Test func aPairedDeviceStaysPairedAcrossRestartsAndUDPCannotRenameIt() async throws {
        try await NetnsRun.with(["a", "b", "k"]) { net in
            let (k, ours, theirs) = try await Self.setUp(net)
            _ = try await k.call(k.device(ours), "org.kde.kdeconnect.device.requestPair")
            try await eventually(10, "the request") { try await Self.device(net, "a", theirs)?.pairing == "requested-by-peer" }
            #expect(try await net.ctl("a", "kdeconnect", "accept", theirs).status == 0)
            try await eventually(10, "kdeconnectd to trust a") { try await k.isTrusted(ours) }

            // handoffd restarts: the endpoint comes back with the same id, links again, and
            // kdeconnectd accepts the certificate it pinned.
            await net.kill("a", SIGTERM)
            try await eventually(10, "kdeconnectd to see a gone") { await !k.isReachable(ours) }
            try await net.startDaemon("a")
            try await eventually(20, "a and kdeconnectd to link again") {
                let d = try await Self.device(net, "a", theirs)
                return d?.reachable == true && d?.paired == true
            }
            #expect(try await Self.status(net, "a").deviceID == ours)
            try await eventually(10, "kdeconnectd to see a again") { await k.isReachable(ours) }
            #expect(try await k.isTrusted(ours))

            // Off and on at once while linked: one endpoint runs, not two (the first one's
            // end, which comes after the second started, is not taken for the second's).
            #expect(try await net.ctl("a", "kdeconnect", "off").status == 0)
            #expect(try await net.ctl("a", "kdeconnect", "on").status == 0)
            try await Task.sleep(nanoseconds: 4_000_000_000)
            let endpoints = try await net.exec("a", ["pgrep", "-f", "^handoff-kdeconnect --state-directory \(net.stateDirectory("a"))"])
            #expect(endpoints.stdout.split(separator: "\n").count == 1, "\(endpoints)")
            try await eventually(20, "a and kdeconnectd to link once more") { try await Self.device(net, "a", theirs)?.reachable == true }

            // A UDP identity with k's id, another name and a port nothing listens on, and a
            // UDP unpair: neither renames, unpairs or unlinks it (CVE-2025-32899, -32900).
            let address = try await net.address("a")
            let spoof = """
                import socket, json
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                ident = {"id": 1, "type": "kdeconnect.identity", "body": {"deviceId": "\(theirs)", "deviceName": "spoofed", "deviceType": "phone",
                         "protocolVersion": 7, "tcpPort": 1760, "incomingCapabilities": [], "outgoingCapabilities": []}}
                unpair = {"id": 2, "type": "kdeconnect.pair", "body": {"pair": False}}
                for p in (ident, unpair):
                    s.sendto((json.dumps(p) + "\\n").encode(), ("\(address)", 1716))
                """
            #expect(try await net.exec("b", ["python3", "-c", spoof]).status == 0)
            try await Task.sleep(nanoseconds: 1_500_000_000)
            let d = try #require(try await Self.device(net, "a", theirs))
            #expect(d.name == "kde-k" && d.paired && d.reachable && d.type == "desktop", "\(d)")
        }
    }

    /// The session agent asks the user (real dunst on a's session bus): the notification
    /// shows kdeconnectd's key, and its Accept pairs.
    @Test func aPairingRequestIsAcceptedFromANotification() async throws {
        try await NetnsRun.with(["a", "b", "k"]) { net in
            let (k, ours, theirs) = try await Self.setUp(net)
            let desk = try DesktopSession(net, host: "a")
            defer { desk.stop() }
            try await desk.startBus()
            try await desk.startNotificationServer()
            try await desk.startAgent()
            let monitorLog = desk.root + "/notify.log"
            let monitor = try await net.spawn("a", log: monitorLog, ["dbus-monitor", "--address", desk.busAddress,
                                                                      "interface='org.freedesktop.Notifications',member='Notify'"])
            defer { net.stop(monitor, SIGTERM) }
            let read = { (try? String(contentsOfFile: monitorLog, encoding: .utf8)) ?? "" }
            try await eventually(10, "dbus-monitor to monitor") { read().contains("member=NameLost") }
            _ = try await k.call(k.device(ours), "org.kde.kdeconnect.device.requestPair")
            let key = try await k.verificationKey(ours)
            try await eventually(20, "a's notification of the request") { read().contains("asks to pair") }
            #expect(read().contains("Does kde-k show the key \(key)?"), "\(read())")
            #expect(try await desk.run(["dunstctl", "action", "0"]).status == 0)  // Accept
            try await eventually(10, "kdeconnectd to trust a") { try await k.isTrusted(ours) }
            #expect(try await Self.device(net, "a", theirs)?.paired == true)
            try await eventually(10, "a's notification that it paired") { read().contains("Paired with kde-k") }
        }
    }

    /// The clipboard both ways, with kdeconnectd on an X display (Xvfb) and xclip as the
    /// user's copy and paste there: its copy is pasted on a and on b; b's copy reaches it
    /// once the user turned that on for it, and not before.
    @Test func theClipboardGoesBothWaysOnceTurnedOn() async throws {
        try await NetnsRun.with(["a", "b", "k"]) { net in
            let display = ":\(Int.random(in: 150...250))"
            let xvfb = try await net.spawn("k", log: "\(net.directory)/xvfb.log", ["Xvfb", display, "-screen", "0", "640x480x24", "-nolisten", "tcp"])
            defer { net.stop(xvfb, SIGTERM) }
            try await eventually(10, "Xvfb on k") { try await net.exec("k", ["env", "DISPLAY=\(display)", "xclip", "-o", "-selection", "clipboard"]).stderr.contains("Can't open display") == false }
            let (k, ours, theirs) = try await Self.setUp(net, display: display)
            _ = try await k.call(k.device(ours), "org.kde.kdeconnect.device.requestPair")
            try await eventually(10, "the request") { try await Self.device(net, "a", theirs)?.pairing == "requested-by-peer" }
            #expect(try await net.ctl("a", "kdeconnect", "accept", theirs).status == 0)
            try await eventually(10, "kdeconnectd to trust a") { try await k.isTrusted(ours) }
            try await Task.sleep(nanoseconds: 1_000_000_000)

            // A copy on k (xclip) is the account's copy: pasted on a, and on b.
            let fromK = "copied on kde \(UInt32.random(in: 0...UInt32.max))"
            let xclip = try await net.spawn("k", log: "\(net.directory)/xclip.log", ["sh", "-c", "printf '%s' '\(fromK)' | DISPLAY=\(display) xclip -selection clipboard -loops 5"])
            defer { net.stop(xclip, SIGTERM) }
            try await eventually(15, "a to paste k's copy") { try await net.ctl("a", "paste").stdout == fromK }
            try await eventually(15, "b to paste k's copy") { try await net.ctl("b", "paste").stdout == fromK }

            // b's copy does not go to k until the user says so.
            let early = "not for kde \(UInt32.random(in: 0...UInt32.max))"
            #expect(try await net.ctl("b", "copy", stdin: early).status == 0)
            try await eventually(10, "a to have b's copy") { try await net.ctl("a", "paste").stdout == early }
            try await Task.sleep(nanoseconds: 1_500_000_000)
            let xpaste = { try await net.exec("k", ["env", "DISPLAY=\(display)", "xclip", "-o", "-selection", "clipboard"]).stdout }
            #expect(try await xpaste() != early, "k does not get copies before it is turned on")
            let on = try await net.ctl("a", "kdeconnect", "clipboard", "kde-k", "on")
            #expect(on.status == 0 && on.stdout.contains("Your copies go to kde-k"), "\(on)")
            #expect(try await Self.device(net, "a", theirs)?.sendsClipboard == true)
            let fromB = "copied on b \(UInt32.random(in: 0...UInt32.max))"
            #expect(try await net.ctl("b", "copy", stdin: fromB).status == 0)
            try await eventually(15, "k's X clipboard to hold b's copy") { try await xpaste() == fromB }
        }
    }

    /// Two handoff endpoints, each the other's "phone", with every UDP broadcast dropped
    /// (nftables in each host): only `_kdeconnect._udp` through avahi-daemon brings them
    /// together. Then protocol 8 on both sides: the identity inside TLS, pairing with the
    /// timestamped key equal on both, and a page sent from one becomes the other's activity.
    @Test func twoEndpointsFindEachOtherByMDNSAloneAndPairInProtocol8() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            for h in ["a", "b"] {
                let cidr = try await net.exec(h, ["sh", "-c", "ip -4 -o addr show dev hnd0 | awk '{print $4}'"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let parts = cidr.split(separator: "/"), octets = parts[0].split(separator: ".").compactMap { UInt32($0) }
                let bits = UInt32(parts[1]) ?? 24
                let address = octets.reduce(0) { $0 << 8 | $1 }, mask = bits == 0 ? 0 : UInt32.max << (32 - bits)
                let b = address | ~mask
                let broadcast = "\(b >> 24).\((b >> 16) & 0xFF).\((b >> 8) & 0xFF).\(b & 0xFF)"
                let rules = "table inet nobroadcast { chain out { type filter hook output priority 0; udp dport 1716 ip daddr { 255.255.255.255, \(broadcast) } counter drop; }; }\n"
                let r = try await net.exec(h, ["nft", "-f", "-"], stdin: rules)
                #expect(r.status == 0, "\(r)")
                try await net.startDaemon(h)
                #expect(try await net.ctl(h, "kdeconnect", "on").status == 0)
            }
            let idA = try #require(try await Self.status(net, "a").deviceID), idB = try #require(try await Self.status(net, "b").deviceID)
            try await eventually(30, "a and b to link, found by mDNS") {
                let d = try await Self.device(net, "a", idB)
                return d?.reachable == true && d?.protocolVersion == 8
            }
            let log = (try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? ""
            let logB = (try? String(contentsOfFile: net.logPath("b"), encoding: .utf8)) ?? ""
            #expect(log.contains("found by mDNS") || logB.contains("found by mDNS"), "one found the other by mDNS")
            // The broadcasts were sent, and dropped.
            let dropped = try await net.exec("a", ["nft", "list", "table", "inet", "nobroadcast"]).stdout
            #expect(dropped.contains("counter packets") && !dropped.contains("counter packets 0 "), "\(dropped)")

            let pair = try await net.ctl("a", "kdeconnect", "pair", "ws-b")
            #expect(pair.status == 0, "\(pair)")
            try await eventually(10, "b to hear a's request") { try await Self.device(net, "b", idA)?.pairing == "requested-by-peer" }
            let keyA = try #require(try await Self.device(net, "a", idB)?.verificationKey)
            let keyB = try #require(try await Self.device(net, "b", idA)?.verificationKey)
            #expect(keyA == keyB && keyA.count == 8 && keyA == keyA.uppercased(), "a \(keyA), b \(keyB)")
            #expect(try await net.ctl("b", "kdeconnect", "accept", "ws-a").status == 0)
            try await eventually(10, "a to be paired with b") { try await Self.device(net, "a", idB)?.paired == true }

            let url = "https://example.org/endpoint-to-endpoint-\(UInt32.random(in: 0...UInt32.max))"
            #expect(try await net.ctl("b", "become-current", "--type", "test.page", "--webpage-url", url).status == 0)
            let sent = try await net.ctl("b", "continue", "--on", "ws-a")
            #expect(sent.status == 0, "\(sent)")
            try await eventually(10, "the page to be a's activity") {
                let current = try await net.ctl("a", "current", "--json").stdout
                return current.contains(url) && current.contains("Shared from ws-b")
            }
        }
    }

    @Test func offByDefaultAndOffStopsTheEndpoint() async throws {
        try await NetnsRun.with(["a"]) { net in
            try await net.startDaemon("a")
            let off = try await Self.status(net, "a")
            #expect(!off.enabled && !off.running)
            let listening = { try await net.exec("a", ["ss", "-Hlnu", "sport = :1716"]).stdout }
            #expect(try await listening().isEmpty, "nothing listens on UDP 1716 while off")
            let doctorOff = try await net.ctl("a", "doctor", "--json")
            #expect(doctorOff.stdout.contains("off: phones and KDE Connect desktops do not see this workstation"), "\(doctorOff)")
            let refused = try await net.ctl("a", "kdeconnect", "pair", "somephone")
            #expect(refused.status != 0 && refused.stderr.contains("KDE Connect is off: turn it on with `handoffctl kdeconnect on`"), "\(refused)")
            let on = try await net.ctl("a", "kdeconnect", "on")
            #expect(on.status == 0, "\(on)")
            let heard = try await listening()
            let sockets = try await net.exec("a", ["ss", "-lnup"])
            #expect(!heard.isEmpty, "UDP 1716 after on: \(heard); \(sockets)")
            let doctorOn = try await net.ctl("a", "doctor", "--json")
            #expect(doctorOn.stdout.contains("listening on TCP 1716 and UDP 1716"), "\(doctorOn)")
            // On stays on across a restart.
            await net.kill("a", SIGTERM)
            try await net.startDaemon("a")
            try await eventually(10, "the endpoint to run again") { try await Self.status(net, "a").running }
            #expect(try await net.ctl("a", "kdeconnect", "off").status == 0)
            try await eventually(10, "the endpoint to stop") { try await listening().isEmpty }
        }
    }
}
}
