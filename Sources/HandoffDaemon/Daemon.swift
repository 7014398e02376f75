import HandoffCore
import HandoffWire
import Logging
import NIOPosix
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// handoffd put together: the registry, the control server and, later, discovery and
/// peers, run as services in one ServiceGroup that SIGTERM stops gracefully.
public struct Daemon: Sendable {
    public let configuration: DaemonConfiguration
    let logger: Logger

    public init(configuration: DaemonConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

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
        try AtomicFile.makeDirectories(config.stateDirectory)
        let startedAt = SystemClock.now()
        let device = DeviceRef(name: config.deviceName)
        let registry = ActivityRegistry(
            settings: .init(device: device, limits: ActivityLimits(maximumEncodedBytes: config.maximumActivityBytes),
                            willSaveTimeout: .milliseconds(config.willSaveTimeoutMilliseconds)),
            store: ActivityStore(stateDirectory: config.stateDirectory),
            logger: logger)
        await registry.restore()

        let maximumActivityBytes = config.maximumActivityBytes
        let router = ControlRouter(registry: registry, status: {
            DaemonStatus(
                version: APIVersion.software, apiVersion: APIVersion.current, deviceName: device.name, deviceID: device.id,
                pid: Int(getpid()), startedAt: startedAt, socketPath: listener.path, current: await registry.current,
                sessions: await registry.sessionCount, maximumActivityBytes: maximumActivityBytes,
                discoveryAvailable: false, discoveryDetail: "peer discovery is not built into this version yet")
        })
        var serverSettings = ControlServerSettings()
        serverSettings.maximumConnections = config.maximumConnections
        serverSettings.requestTimeout = config.requestTimeoutMilliseconds
        serverSettings.idleTimeout = config.idleTimeoutMilliseconds
        // Typed JSON (base64, field names) runs larger than the binary payload it describes.
        serverSettings.maximumBodyBytes = max(256 * 1024, config.maximumActivityBytes * 4)
        let server = ControlServer(
            listener: listener, router: router, registry: registry, settings: serverSettings,
            group: MultiThreadedEventLoopGroup.singleton, logger: logger,
            onReady: { SystemdNotifier.notify("READY=1\nSTATUS=serving on \(listener.path)") })

        let group = ServiceGroup(configuration: .init(
            services: [.init(service: server)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
        SystemdNotifier.notify("STOPPING=1")
        logger.info("handoffd stopped")
    }
}
