import HandoffClient
import HandoffControlAPI
import HandoffCore
import HandoffJournal
import HandoffKDEConnect
import HandoffSystem
import Logging
import NIOCore
import NIOPosix
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// handoff-kdeconnect: the KDE Connect endpoint (Docs/KDEConnect.md). handoffd starts it,
/// from its own file by this name, when the user turns KDE Connect on, with a socket pair
/// as its standard input and output; it stops when handoffd closes that. It speaks to
/// handoffd's local API like any app, and to KDE Connect devices on the LAN.
public enum KDEConnectProgram {
    struct Options {
        var stateDirectory: String?
        var name = "handoff"
        var socket: String?
        var broadcast: [String] = []
        var listenAddress = "0.0.0.0"
        var udpPort = KDEConnectLimits.discoveryPort
        var logLevel = Logger.Level.info
    }

    static let usage = """
        usage: handoff-kdeconnect --state-directory DIR [--name NAME] [--socket PATH]
                                  [--broadcast ADDRESS]... [--log-level LEVEL]

        The KDE Connect endpoint of handoff. handoffd starts it when KDE Connect is turned
        on (`handoffctl kdeconnect on`); it is not meant to be started by hand.

        """

    public static func run(_ arguments: [String]) async -> Int32 {
        var options = Options()
        var rest = arguments[...]
        func value(_ flag: String) -> String? {
            guard let v = rest.popFirst() else {
                say(2, "handoff-kdeconnect: \(flag) needs a value\n\n" + usage)
                return nil
            }
            return v
        }
        while let arg = rest.popFirst() {
            switch arg {
            case "--state-directory": guard let v = value(arg) else { return 64 }; options.stateDirectory = v
            case "--name": guard let v = value(arg) else { return 64 }; options.name = v
            case "--socket": guard let v = value(arg) else { return 64 }; options.socket = v
            case "--broadcast": guard let v = value(arg) else { return 64 }; options.broadcast.append(v)
            case "--listen-address": guard let v = value(arg) else { return 64 }; options.listenAddress = v
            case "--udp-port":
                guard let v = value(arg), let port = Int(v), (1...65535).contains(port) else { return 64 }
                options.udpPort = port
            case "--log-level":
                guard let v = value(arg), let level = Logger.Level(rawValue: v) else {
                    say(2, "handoff-kdeconnect: --log-level is one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))\n")
                    return 64
                }
                options.logLevel = level
            case "--help", "-h":
                say(1, usage)
                return 0
            case "--version":
                say(1, "handoff-kdeconnect \(APIVersion.software)\n")
                return 0
            default:
                say(2, "handoff-kdeconnect: unknown argument '\(arg.prefix(64))'\n\n" + usage)
                return 64
            }
        }
        guard let stateDirectory = options.stateDirectory else {
            say(2, "handoff-kdeconnect: --state-directory is required\n\n" + usage)
            return 64
        }
        var st = stat()
        guard fstat(0, &st) == 0, (st.st_mode & S_IFMT) == S_IFSOCK else {
            say(2, "handoff-kdeconnect: handoffd starts this program (its standard input is handoffd's socket): turn KDE Connect on with `handoffctl kdeconnect on`\n")
            return 64
        }
        if options.broadcast.isEmpty { options.broadcast = ["255.255.255.255"] }

        // On handoffd's stderr, which is the journal under systemd: with priorities, as its own.
        let level = options.logLevel
        let log = Logger(label: "handoff-kdeconnect") { JournalLogHandler(label: $0, level: level, prefix: "kdeconnect: ") }
        do {
            try await serve(options, stateDirectory: stateDirectory, log: log)
            return 0
        } catch {
            log.error("the KDE Connect endpoint stopped", metadata: ["error": "\(error)"])
            return 1
        }
    }

    /// An interface's IPv4 broadcast address, made from its address and netmask: what
    /// getifaddrs says of an address added without `brd` is the address itself, and the
    /// kernel treats the subnet's last address as its broadcast all the same.
    static func broadcastAddress(_ device: NIONetworkDevice) -> String? {
        guard case .v4(let a)? = device.address, case .v4(let m)? = device.netmask else { return nil }
        let address = UInt32(bigEndian: a.address.sin_addr.s_addr), mask = UInt32(bigEndian: m.address.sin_addr.s_addr)
        guard mask != 0, mask != .max else { return nil }
        let b = address | ~mask
        return "\(b >> 24).\((b >> 16) & 0xFF).\((b >> 8) & 0xFF).\(b & 0xFF)"
    }

    private static func serve(_ options: Options, stateDirectory: String, log: Logger) async throws {
        let files = EndpointFiles(directory: stateDirectory)
        let identity = try files.loadIdentity()
        let paired = try files.loadDevices()
        let tls = try EndpointTLS(certificatePEM: identity.certificatePEM, privateKeyPEM: identity.privateKeyPEM,
                                  pinned: Dictionary(paired.map { ($0.id, $0.certificate) }, uniquingKeysWith: { a, _ in a }))
        let ownPublicKey = try KDEConnectCertificate.publicKeyDER(
            ofCertificate: try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem).toDERBytes())
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let events = EndpointEvents()
        let sockets = LanSockets(group: group, events: events, tls: tls)
        var own = KDEConnectIdentity(deviceID: identity.deviceID, name: KDEConnectIdentity.filterName(options.name).isEmpty ? "handoff" : KDEConnectIdentity.filterName(options.name),
                                     type: .desktop, protocolVersion: 8,
                                     incomingCapabilities: ["kdeconnect.share.request", "kdeconnect.clipboard", "kdeconnect.clipboard.connect", "kdeconnect.ping"],
                                     outgoingCapabilities: ["kdeconnect.share.request", "kdeconnect.clipboard", "kdeconnect.ping"])
        let ownForAccepted = own
        let tcpPort = try await sockets.listen(own: { ownForAccepted }, ports: KDEConnectLimits.ports, host: options.listenAddress)
        own.tcpPort = tcpPort
        try await sockets.listenUDP(port: options.udpPort, host: options.listenAddress)
        let bridge = try await BridgeWriter.connect(descriptor: dup(0), group: group, events: events)
        let endpoint = KDEConnectEndpoint(own: own, ownPublicKey: ownPublicKey, files: files, paired: paired, sockets: sockets,
                                          handoff: HandoffClient(socketPath: options.socket), bridge: bridge, log: log,
                                          tcpPort: tcpPort, udpPort: options.udpPort)
        log.info("KDE Connect endpoint listening", metadata: ["device": "\(identity.deviceID)", "tcp": "\(tcpPort)", "udp": "\(options.udpPort)"])
        // Without avahi-daemon the broadcasts still find devices: mDNS is a second way.
        let announcement: DeviceAnnouncement?
        do { announcement = try DeviceAnnouncement(own: own, udpPort: options.udpPort, events: events, log: log) } catch {
            log.info("not announced by mDNS (UDP broadcasts only)", metadata: ["error": "\(error)"])
            announcement = nil
        }
        bridge.send(.notice("ready", ["status": endpoint.status().json]))
        let announcer = Task { [own, log] in
            // Our identity at start, and again whenever this machine's IPv4 addresses
            // change (a new network): devices there dial us. To 255.255.255.255 as KDE
            // does, and to each interface's own broadcast address, which reaches a
            // network that has no route for the former.
            var last: [String] = []
            while !Task.isCancelled {
                let devices = ((try? System.enumerateDevices()) ?? []).filter { $0.address?.protocol == .inet && $0.address?.ipAddress != "127.0.0.1" }
                let now = devices.compactMap { $0.address?.ipAddress }.sorted()
                if now != last {
                    last = now
                    let interfaces = devices.compactMap(Self.broadcastAddress)
                    let to = Array(Set(options.broadcast + interfaces)).sorted()
                    log.debug("our identity by UDP broadcast", metadata: ["to": "\(to.joined(separator: " "))"])
                    sockets.broadcast(own, to: to)
                }
                try? await Task.sleep(nanoseconds: 10_000_000_000)
            }
        }
        let handoff = HandoffClient(socketPath: options.socket)
        let clipboard = Task {
            // handoffd's clipboard events, for the devices that take this workstation's copies.
            while !Task.isCancelled {
                if let session = try? await handoff.openSession() {
                    events.send(.clipboardChanged(try? await handoff.clipboard(), baseline: true))
                    do {
                        for try await event in session.events {
                            if case .clipboard(let record) = event { events.send(.clipboardChanged(record, baseline: false)) }
                        }
                    } catch {}
                    session.close()
                }
                try? await Task.sleep(nanoseconds: 2_000_000_000)
            }
        }
        await endpoint.run(events)
        announcement?.stop()
        clipboard.cancel()
        announcer.cancel()
        sockets.close()
        try? await group.shutdownGracefully()
        log.info("KDE Connect endpoint stopped: handoffd closed its socket")
    }
}

private func say(_ fd: Int32, _ text: String) {
    _ = try? Array(text.utf8).withUnsafeBytes { try writeAll(fd, $0) }
}
