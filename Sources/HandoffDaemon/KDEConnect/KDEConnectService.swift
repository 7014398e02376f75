import HandoffControlAPI
import HandoffCore
import HandoffKDEConnect
import Logging
import NIOCore
import NIOPosix

/// KDE Connect, seen from handoffd (Docs/KDEConnect.md): whether the user turned it on
/// (kept in `kdeconnect.json`), the endpoint process that speaks it when it is on
/// (`KDEConnectEndpointProcess`), and the local API's requests for it, passed to that
/// process and answered with what it says. The protocol itself, the network and the
/// devices' pairing are the endpoint's alone: nothing of it runs in handoffd.
actor KDEConnectService {
    private let stateDirectory: String
    private let arguments: [String]
    private let group: EventLoopGroup
    private let logger: Logger
    /// Where pairing changes are told to the session agent (its notification asks the user).
    private let events: @Sendable (ControlEvent) async -> Void
    private var enabled = false
    private var process: KDEConnectEndpointProcess?
    private var starting = false
    private var problem: String?
    private var nextID: Int64 = 0
    private var waiting: [Int64: CheckedContinuation<Result<JSONValue, HandoffError>, Never>] = [:]
    private var restarts: [Timestamp] = []
    private var stopped = false

    /// `arguments`: what the endpoint is started with besides its state directory (its name,
    /// the control socket, the log level).
    init(stateDirectory: String, arguments: [String], group: EventLoopGroup, logger: Logger,
         events: @escaping @Sendable (ControlEvent) async -> Void = { _ in }) {
        self.stateDirectory = stateDirectory
        self.arguments = arguments
        self.group = group
        self.logger = logger
        self.events = events
    }

    private var settingsPath: String { stateDirectory + "/kdeconnect.json" }

    /// At start: the endpoint runs if the user turned it on.
    func start() async {
        if let bytes = try? AtomicFile.read(settingsPath, limit: 4096),
           let o = try? JSONValue(parsing: bytes).objectValue, o["enabled"] == .bool(true) {
            enabled = true
        }
        if enabled { await launch() }
    }

    func stop() {
        stopped = true
        process?.stop()
        process = nil
        for (_, c) in waiting { c.resume(returning: .failure(Self.notRunning("handoffd is stopping"))) }
        waiting = [:]
    }

    func set(enabled: Bool) async throws(HandoffError) -> KDEConnectStatus {
        do {
            try AtomicFile.write(JSONValue.object(["enabled": .bool(enabled)]).serializedBytes() + [10], to: settingsPath)
        } catch {
            throw HandoffError(.storageFull, code: "not_saved", message: "cannot save the KDE Connect setting in \(settingsPath): \(error)")
        }
        self.enabled = enabled
        restarts = []
        if enabled {
            if process == nil { await launch() }
        } else {
            process?.stop()
            process = nil
            problem = nil
        }
        return await status()
    }

    func status() async -> KDEConnectStatus {
        guard process != nil else {
            return KDEConnectStatus(enabled: enabled, running: false, problem: enabled ? problem : nil)
        }
        switch await ask("status", [:]) {
        case .success(let json): return KDEConnectStatus(json: json)
        case .failure(let e): return KDEConnectStatus(enabled: enabled, running: false, problem: e.message)
        }
    }

    /// The device after the action (pair, accept, reject, unpair), or what was sent to it
    /// (`KDEConnectSent`), as the endpoint answered.
    func device(_ device: String, _ request: KDEConnectDeviceRequest) async throws(HandoffError) -> JSONValue {
        guard process != nil else {
            throw enabled ? Self.notRunning(problem ?? "it is starting") : Self.off
        }
        var fields: JSONObject = ["device": .string(device)]
        if request.action == .send { fields["activity"] = .string(request.activity ?? "current") }
        if let enabled = request.enabled { fields["enabled"] = .bool(enabled) }
        return try await ask(request.action.rawValue, fields).get()
    }

    /// For `handoffctl doctor`: on or off, and where it listens (the ports a firewall must
    /// open for phones: TCP and UDP 1716, TCP up to 1764).
    func diagnostic() async -> DiagnosticCheck {
        let s = await status()
        guard s.enabled else {
            return DiagnosticCheck("kdeconnect", .ok, "KDE Connect", "off: phones and KDE Connect desktops do not see this workstation (handoffctl kdeconnect on)")
        }
        guard s.running else {
            return DiagnosticCheck("kdeconnect", .failed, "KDE Connect", "on, but its endpoint is not running: \(s.problem ?? "it is starting")",
                                   fix: "see handoffd's log (journalctl --user -u handoffd); handoffctl kdeconnect off, then on, starts it again")
        }
        let paired = s.devices.filter(\.paired).count
        return DiagnosticCheck("kdeconnect", .ok, "KDE Connect",
                               "on, as \"\(s.name ?? "?")\", listening on TCP \(s.tcpPort.map(String.init) ?? "?") and UDP \(s.udpPort.map(String.init) ?? "?") (a firewall must let phones reach them); \(paired) paired, \(s.devices.filter(\.reachable).count) reachable")
    }

    static let off = HandoffError(.unavailable, code: "kdeconnect_off", message: "KDE Connect is off: turn it on with `handoffctl kdeconnect on`")

    static func notRunning(_ why: String) -> HandoffError {
        HandoffError(.unavailable, code: "kdeconnect_unavailable", message: "the KDE Connect endpoint is not running (\(why)); handoffctl kdeconnect list says why, and handoffd's log more")
    }

    // MARK: - The process

    private func launch() async {
        guard !starting, !stopped else { return }
        starting = true
        defer { starting = false }
        let args = ["--state-directory", stateDirectory + "/kdeconnect"] + arguments
        do {
            let p = try await KDEConnectEndpointProcess.start(
                arguments: args, group: group,
                lines: { line in Task { await self.received(line) } },
                ended: { pid in Task { await self.ended(pid) } })
            process = p
            problem = nil
            logger.info("KDE Connect endpoint started", metadata: ["pid": "\(p.pid)"])
        } catch {
            problem = error.message
            logger.error("the KDE Connect endpoint could not start", metadata: ["error": "\(error.message)"])
        }
    }

    /// A process ended: the one running now (not one stopped before, whose end may come
    /// after its successor started).
    private func ended(_ pid: pid_t) async {
        guard process?.pid == pid else { return }
        process = nil
        for (_, c) in waiting { c.resume(returning: .failure(Self.notRunning("it stopped"))) }
        waiting = [:]
        guard enabled, !stopped else { return }
        // Started again, unless it keeps failing: at most 5 starts a minute.
        let now = SystemClock.now()
        restarts = restarts.filter { $0 > now.adding(nanoseconds: -60_000_000_000) } + [now]
        guard restarts.count <= 5 else {
            problem = "it stopped 5 times within a minute; see handoffd's log (journalctl --user -u handoffd), then turn it off and on again"
            logger.error("the KDE Connect endpoint keeps stopping: not starting it again", metadata: ["starts": "\(restarts.count)"])
            return
        }
        problem = "it stopped and is starting again"
        logger.warning("the KDE Connect endpoint stopped: starting it again")
        try? await Task.sleep(nanoseconds: 1_000_000_000)
        if enabled, process == nil, !stopped { await launch() }
    }

    private func received(_ line: KDEConnectBridgeLine) async {
        switch line {
        case .reply(let id, let result):
            waiting.removeValue(forKey: id)?.resume(returning: result)
        case .notice(let name, let fields):
            let device = fields["device"].map(KDEConnectDevice.init(json:))
            switch name {
            case "pairing-requested":
                logger.notice("a KDE Connect device asks to pair: compare the key it shows, then handoffctl kdeconnect accept or reject",
                              metadata: ["device": "\(device?.name ?? "?")", "id": "\(device?.id ?? "?")", "key": "\(device?.verificationKey ?? "?")"])
                if let device { await events(.kdeConnectPairing(device, state: "requested-by-peer", message: nil)) }
            case "paired", "unpaired", "pairing-failed":
                logger.info("KDE Connect pairing", metadata: ["what": "\(name)", "device": "\(device?.name ?? "?")",
                                                               "message": "\(fields["message"]?.stringValue ?? "")"])
                if let device {
                    await events(.kdeConnectPairing(device, state: name == "pairing-failed" ? "failed" : name, message: fields["message"]?.stringValue))
                }
            default:
                logger.debug("KDE Connect endpoint", metadata: ["notice": "\(name)"])
            }
        case .request:
            break  // the endpoint asks nothing of handoffd here: it uses the local API
        }
    }

    private func ask(_ op: String, _ fields: JSONObject) async -> Result<JSONValue, HandoffError> {
        guard let process else { return .failure(enabled ? Self.notRunning(problem ?? "it is starting") : Self.off) }
        nextID += 1
        let id = nextID
        let timeout = group.any().scheduleTask(in: .seconds(10)) {
            Task { await self.timedOut(id) }
        }
        let result = await withCheckedContinuation { c in
            waiting[id] = c
            process.send(.request(id: id, op: op, fields: fields))
        }
        timeout.cancel()
        return result
    }

    private func timedOut(_ id: Int64) {
        waiting.removeValue(forKey: id)?.resume(returning: .failure(HandoffError(.peerTimedOut, code: "kdeconnect_timeout",
                                                                                  message: "the KDE Connect endpoint did not answer within 10 s")))
    }
}
