import HandoffCore
import HandoffControlAPI
import HandoffAvahi
import HandoffSystem
import NIOConcurrencyHelpers
import Logging
import NIOPosix
import ServiceLifecycle
import UnixSignals
#if canImport(Glibc)
import Glibc
#endif

/// handoffd put together. Each long-lived part is a service in one ServiceGroup, in the
/// order the parts rely on each other; SIGTERM stops them gracefully in reverse: the peer
/// side (listener and links), Avahi, the history helper, continuation streams, the session
/// agent's pending requests, and last the control API, whose connections the streams use.
public struct Daemon: Sendable {
    public let configuration: DaemonConfiguration
    let logger: Logger

    public init(configuration: DaemonConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs until SIGTERM or SIGINT. A new identity (`POST /v1/identity/renew`) stops
    /// every service, sets the old identity's files aside, and starts them all again in
    /// this process, on the same control socket.
    public func run() async throws {
        let config = configuration
        let listener: ControlListener
        if let fd = ControlListener.fromSystemd() {
            listener = .inherited(fd: fd, path: config.socketPath)
        } else {
            // First, so that a second daemon leaves the running one's state alone.
            try ControlListener.prepare(path: config.socketPath)
            listener = .path(config.socketPath)
        }
        let restart = DaemonRestart()
        // Beside the services' own: a stop that comes while they stop for a new identity
        // must still stop the daemon, not start it again.
        let signals = Task {
            for await _ in await UnixSignalsSequence(trapping: .sigterm, .sigint) { await restart.stop() }
        }
        defer { signals.cancel() }
        while true {
            restart.nextRun()
            // NIO closes the socket it serves when it stops: each run gets its own copy of
            // systemd's, which stays open for the next.
            var served = listener
            if case .inherited(let fd, let path) = listener { served = .inherited(fd: fcntl(fd, F_DUPFD_CLOEXEC, 0), path: path) }
            try await runOnce(listener: served, restart: restart)
            guard let folder = restart.renewal, !restart.isStopping else {
                SystemdNotifier.notify("STOPPING=1")
                logger.info("handoffd stopped")
                return
            }
            // systemd's word for a service that goes on in the same process: READY=1 ends it.
            SystemdNotifier.notify("RELOADING=1\nSTATUS=starting again with a new identity")
            do {
                let moved = try IdentityRetirement.retire(stateDirectory: config.stateDirectory, into: folder)
                logger.notice("set the old identity aside; starting again with a new one", metadata: ["kept": "\(folder)", "files": "\(moved.joined(separator: ", "))"])
            } catch {
                logger.error("could not set the old identity aside; starting again with it", metadata: ["error": "\(error)"])
            }
            if case .path = listener { try ControlListener.prepare(path: config.socketPath) }
        }
    }

    private func runOnce(listener: ControlListener, restart: DaemonRestart) async throws {
        let config = configuration
        try AtomicFile.makeDirectories(config.stateDirectory)
        removeInterruptedSaves(in: config.stateDirectory)
        // One clock and one place for timers, handed to every part that decides by time.
        let clock = SystemClock()
        let timers = EventLoopTimers(loop: MultiThreadedEventLoopGroup.singleton.any())
        let startedAt = clock.now()
        let identity = try DeviceIdentity.loadOrCreate(directory: config.stateDirectory)
        let device = DeviceRef(name: config.deviceName, id: identity.deviceID.description)
        logger.info("device identity", metadata: ["id": "\(identity.deviceID)", "name": "\(config.deviceName)"])
        if let replaced = identity.replaced {
            logger.error("\(replaced); pair this workstation again with your others (handoffctl pair)")
        }
        var registrySettings = ActivityRegistry.Settings(
            device: device, limits: ActivityLimits(maximumEncodedBytes: config.maximumActivityBytes),
            willSaveTimeout: .milliseconds(config.willSaveTimeoutMilliseconds),
            unownedExpiry: config.unownedExpiryMinutes > 0 ? .seconds(config.unownedExpiryMinutes * 60) : nil)
        if let host = config.sshHost { registrySettings.sshHost = host }
        let registry = ActivityRegistry(
            settings: registrySettings,
            store: ActivityStore(stateDirectory: config.stateDirectory),
            logger: logger, clock: clock, timers: timers)
        await registry.restore()

        let maximumActivityBytes = config.maximumActivityBytes
        let streams = StreamBroker(registry: registry, acceptTimeout: .milliseconds(config.streamAcceptTimeoutMilliseconds), timers: timers)
        let agent = SessionAgentBroker(registry: registry, timers: timers)
        let restoration = RestorationStore(stateDirectory: config.stateDirectory, logger: logger)
        // Its helper starts at the first eligible offer or history request, not now.
        let history = config.historyDays > 0
            ? ActivityHistory(directory: config.stateDirectory, retentionDays: config.historyDays,
                              idleTimeout: .seconds(config.historyHelperIdleSeconds), clock: clock, logger: logger)
            : nil
        let avahi = config.discovery ? AvahiDiscovery(browseDomains: config.dnsSDDomains, logger: logger) : nil
        let peerEvents = PeerEvents()
        let clipboard = ClipboardService(settings: ClipboardService.Settings(config), own: PeerDevice(id: identity.deviceID.description, name: config.deviceName),
                                         isSessionOpen: { await registry.isSessionOpen($0) }, events: peerEvents.continuation,
                                         clock: clock, timers: timers, logger: logger)
        let trust = TrustStore(stateDirectory: config.stateDirectory, logger: logger)
        let peerSettings = PeerServiceSettings(config)
        let limits = ActivityLimits(maximumEncodedBytes: config.maximumActivityBytes)
        let keeping = KeepingService(identity: identity, registry: registry, restoration: restoration, trust: trust, limits: limits,
                                     maximumFrameBytes: peerSettings.maximumFrameBytes, store: KeptOfferStore(stateDirectory: config.stateDirectory),
                                     events: peerEvents.continuation, clock: clock, timers: timers, logger: logger)
        let accounts = AccountService(identity: identity, store: AccountStore(stateDirectory: config.stateDirectory), trust: trust, clock: clock, logger: logger)
        let tls = try PeerTLS(identity: identity)
        let dialer = PeerDialer(tls: tls, own: identity.deviceID, settings: peerSettings)
        let peerStreams = PeerStreamService(own: identity.deviceID, deviceName: config.deviceName, trust: trust, registry: registry, broker: streams,
                                            clipboard: clipboard, keeping: keeping, dialer: dialer, maximumStreamsPerPeer: peerSettings.maximumStreamsPerPeer,
                                            logger: logger)
        let pairing = PairingService(own: identity.deviceID, trust: trust, accounts: accounts, registry: registry, clock: clock, timers: timers, logger: logger)
        let peers = try PeerService(
            identity: identity, trust: trust,
            accountStore: AccountStore(stateDirectory: config.stateDirectory), registry: registry, streams: streams, agent: agent, deviceName: config.deviceName,
            limits: limits, settings: peerSettings,
            tls: tls, dialer: dialer, events: peerEvents, accounts: accounts, clipboard: clipboard, keeping: keeping, peerStreams: peerStreams, pairing: pairing, discovery: avahi, history: history,
            restoration: restoration, group: MultiThreadedEventLoopGroup.singleton, logger: logger, clock: clock, timers: timers)
        let sessionEndings = SessionEndings([
            ("restoration state", { await restoration.sessionEnded($0) }),
            ("stream requests", { await streams.sessionClosed($0) }),
            ("session agent", { await agent.sessionClosed($0) }),
            ("sleep guard", { await peers.sessionClosed($0) }),
            ("clipboard", { await clipboard.sessionEnded($0) }),
        ])
        await registry.onSessionClosed(sessionEndings.ended)
        // Off until the user turns it on; then its own process (Docs/KDEConnect.md).
        let kdeConnect = KDEConnectService(
            stateDirectory: config.stateDirectory,
            arguments: ["--name", config.deviceName, "--socket", listener.path, "--log-level", "\(logger.logLevel)"],
            group: MultiThreadedEventLoopGroup.singleton, logger: logger,
            events: { await registry.broadcast($0) })
        let router = ControlRouter(registry: registry, peers: peers, clipboard: clipboard, peerStreams: peerStreams, pairing: pairing, streams: streams, agent: agent, history: history, restoration: restoration,
                                   kdeConnect: kdeConnect,
                                   stateDirectory: config.stateDirectory, configuredRoots: config.syncedRoots, restart: restart, status: {
            let (discoveryAvailable, discoveryDetail) = await peers.discoveryState()
            return DaemonStatus(
                version: APIVersion.software, apiVersion: APIVersion.current, deviceName: device.name, deviceID: device.id,
                pid: Int(getpid()), startedAt: startedAt, socketPath: listener.path, current: await registry.current,
                sessions: await registry.sessionCount, maximumActivityBytes: maximumActivityBytes,
                discoveryAvailable: discoveryAvailable, discoveryDetail: discoveryDetail, launcher: await agent.hasLauncher)
        }, clock: clock)
        var serverSettings = ControlServerSettings()
        serverSettings.maximumConnections = config.maximumConnections
        serverSettings.requestTimeout = config.requestTimeoutMilliseconds
        serverSettings.idleTimeout = config.idleTimeoutMilliseconds
        // Typed JSON (base64, field names) runs larger than the binary payload it describes.
        serverSettings.maximumBodyBytes = max(256 * 1024, config.maximumActivityBytes * 4)
        let server = ControlServer(
            listener: listener, router: router, registry: registry, settings: serverSettings,
            group: MultiThreadedEventLoopGroup.singleton, logger: logger,
            onReady: {
                SystemdNotifier.notify("READY=1\nSTATUS=serving on \(listener.path)")
                // Once the peer side has started too (TLS, Avahi), which takes well under this.
                if getenv("HANDOFF_KEEP_STARTUP_CODE") == nil {
                    MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .seconds(5)) {
                        StartupCodeRelease.release(logger: logger)
                        RequestPathWarmUp.run(socketPath: listener.path, logger: logger)
                    }
                }
            })

        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: server),
            .init(service: sessionEndings),
            .init(service: accounts),
            .init(service: clipboard),
            .init(service: keeping),
            .init(service: peerStreams),
            .init(service: pairing),
            .init(service: LifetimeService("session agent requests", stop: { await agent.shutdown() })),
            .init(service: LifetimeService("continuation streams", stop: { await streams.shutdown() })),
        ]
        // Beside the control socket, for apps that hand over a stream's ends (§15.8).
        let descriptorPath = DescriptorPassing.socketPath(besideControlSocket: listener.path)
        let descriptors = NIOLockedValueBox<DescriptorListener?>(nil)
        services.append(.init(service: LifetimeService("descriptor socket", start: {
            do {
                let l = try DescriptorListener(path: descriptorPath, broker: streams, logger: logger)
                descriptors.withLockedValue { $0 = l }
            } catch {
                // Streams still work without it, through the app.
                logger.error("cannot listen on the descriptor socket; apps will relay their streams themselves", metadata: ["path": "\(descriptorPath)", "error": "\(error)"])
            }
        }, stop: { descriptors.withLockedValue { $0?.close() } })))
        if let history {
            services.append(.init(service: LifetimeService("activity history", start: { await history.start() }, stop: { await history.stop() })))
        }
        if let avahi {
            services.append(.init(service: LifetimeService("mDNS discovery", start: { try avahi.start() }, stop: { avahi.stop() })))
        }
        services.append(.init(service: peers))
        services.append(.init(service: LifetimeService("KDE Connect", start: { await kdeConnect.start() }, stop: { await kdeConnect.stop() })))
        let group = ServiceGroup(configuration: .init(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        restart.serve(group)
        // What was changed last is on disk before the process ends, however it ends.
        do { try await group.run() } catch {
            await StateWriter.shared.settleAll()
            throw error
        }
        await StateWriter.shared.settleAll()
    }
}

extension Daemon {
    /// The temporary files of saves a killed daemon never finished. Only the names
    /// handoffd writes: the state directory may be a shared folder.
    private func removeInterruptedSaves(in stateDirectory: String) {
        let stateFiles: Set<Substring> = [
            Substring(ActivityStore.fileName), Substring(AccountStore.fileName), Substring(AdvertisementKeyStore.fileName),
            Substring(TrustStore.fileName), Substring(DeviceIdentity.keyFile), Substring(DeviceIdentity.certificateFile),
            Substring(KeptOfferStore.fileName),
        ]
        let restoration = stateDirectory + "/" + RestorationStore.directoryName
        for dir in [stateDirectory, restoration] {
            let removed = AtomicFile.removeStaleTemporaries(in: dir) { name in
                dir == restoration ? name.hasSuffix(".json") : stateFiles.contains(name)
            }
            if !removed.isEmpty {
                logger.notice("removed what an interrupted save left behind", metadata: ["directory": "\(dir)", "files": "\(removed.joined(separator: ", "))"])
            }
        }
    }
}
