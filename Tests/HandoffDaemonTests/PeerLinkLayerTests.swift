import Foundation
import HandoffControlAPI
import HandoffCore
import HandoffTestSupport
import Logging
import NIOPosix
import Testing
@testable import HandoffDaemon

/// The link layer (`PeerService`) of two workstations in one process, on loopback with
/// real TLS and pinned certificates, and the time given: a link comes up, an offer crosses
/// and is continued, and when one side goes the other redials only as its backoff says,
/// which the test decides by moving the time. No Avahi (static addresses), no daemon.
/// Its waits allow 30 s: it runs in the same process as every other test, all started at
/// once, and under ThreadSanitizer on 2 cores the first listener took over 10 s to be told
/// it was bound (CI, 2026-12-07). The time limit keeps a lost event from hanging the run.
@Suite("Peer link layer", .serialized, .timeLimit(.minutes(3)))
struct PeerLinkLayerTests {
    /// One workstation's parts, as `Daemon` makes them, with `ManualTime`.
    struct Workstation {
        let time: ManualTime
        let identity: DeviceIdentity
        let trust: TrustStore
        let registry: ActivityRegistry
        let peers: PeerService
        let name: String
        let directory: String

        /// `directory`: an earlier start's state, to start again with it.
        init(_ name: String, time: ManualTime, port: Int = 0, directory: String? = nil) throws {
            let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("link-\(name)-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            self.directory = directory
            let logger = Logger(label: "test-\(name)")
            self.name = name
            self.time = time
            identity = try DeviceIdentity.loadOrCreate(directory: directory)
            trust = TrustStore(stateDirectory: directory, logger: logger)
            registry = ActivityRegistry(settings: .init(device: DeviceRef(name: name, id: identity.deviceID.description)), store: nil,
                                        logger: logger, clock: time, timers: time)
            var settings = PeerServiceSettings()
            settings.listenAddress = "127.0.0.1"
            settings.port = port
            settings.discovery = false
            let events = PeerEvents()
            let limits = ActivityLimits()
            let own = PeerDevice(id: identity.deviceID.description, name: name)
            let registry = self.registry
            let clipboard = ClipboardService(settings: .init(), own: own, isSessionOpen: { await registry.isSessionOpen($0) }, events: events.continuation,
                                             clock: time, timers: time, logger: logger)
            let keeping = KeepingService(identity: identity, registry: registry, restoration: nil, trust: trust, limits: limits,
                                         maximumFrameBytes: settings.maximumFrameBytes, store: KeptOfferStore(stateDirectory: directory),
                                         events: events.continuation, clock: time, timers: time, logger: logger)
            let tls = try PeerTLS(identity: identity)
            let dialer = PeerDialer(tls: tls, own: identity.deviceID, settings: settings)
            let broker = StreamBroker(registry: registry, acceptTimeout: .seconds(10), timers: time)
            let peerStreams = PeerStreamService(own: identity.deviceID, deviceName: name, trust: trust, registry: registry, broker: broker,
                                                clipboard: clipboard, keeping: keeping, dialer: dialer, maximumStreamsPerPeer: 8, logger: logger)
            let accounts = AccountService(identity: identity, store: AccountStore(stateDirectory: directory), trust: trust, clock: time, logger: logger)
            let pairing = PairingService(own: identity.deviceID, trust: trust, accounts: accounts, registry: registry, clock: time, timers: time, logger: logger)
            peers = try PeerService(identity: identity, trust: trust, accountStore: AccountStore(stateDirectory: directory), registry: registry,
                                    streams: broker,
                                    agent: SessionAgentBroker(registry: registry, timers: time), deviceName: name, limits: limits, settings: settings,
                                    tls: tls, dialer: dialer, events: events, accounts: accounts,
                                    clipboard: clipboard, keeping: keeping, peerStreams: peerStreams, pairing: pairing, group: MultiThreadedEventLoopGroup.singleton,
                                    logger: logger, clock: time, timers: time)
        }
    }

    static func connected(_ peers: PeerService, to other: Workstation) async -> Bool {
        await peers.peers().contains { $0.id == other.identity.deviceID.description && $0.connected }
    }

    @Test func aLinkCarriesAnOfferAndComesBackOnlyWhenTheBackoffSaysSo() async throws {
        let time = ManualTime(SystemClock.now())
        let a = try Workstation("a", time: time)
        let runA = Task { try await a.peers.run() }
        try await eventually(30, "a listens") { await a.peers.listenPort != 0 }
        let port = await a.peers.listenPort
        let b = try Workstation("b", time: time)
        _ = try await a.trust.trust(b.identity.deviceID, name: "b", at: time.now())
        _ = try await b.trust.trust(a.identity.deviceID, name: "a", address: "127.0.0.1:\(port)", at: time.now())
        let (_, bEvents) = await b.registry.openSession()
        var events = bEvents.makeAsyncIterator()
        let runB = Task { try await b.peers.run() }
        defer { runB.cancel() }
        try await eventually(30, "b links with a (a static address, dialled at start)") { await Self.connected(b.peers, to: a) }
        try await eventually(30, "a has the link too") { await Self.connected(a.peers, to: b) }

        // An offer crosses the link and is continued with its payload.
        var draft = ActivityDraft(activityType: "org.example.edit")
        draft.title = "notes"
        draft.userInfo = ["page": .integer(7)]
        let record = try await a.registry.becomeCurrent(draft, session: nil)
        var offered: ActivitySummary?
        while offered == nil, let e = await events.next() {
            if case .peerOffer(let d, let s?) = e, d.id == a.identity.deviceID.description { offered = s }
        }
        #expect(offered?.id == record.activity.id && offered?.title == "notes")
        let continued = try await b.peers.continueActivity(from: "a", type: nil, id: nil)
        #expect(continued.record.activity.userInfo["page"] == .integer(7) && continued.device.name == "a")

        // a goes: b hears the link end, and redials only when its backoff is due.
        runA.cancel()
        _ = try? await runA.value
        var gone = false
        while !gone, let e = await events.next() {
            if case .peerDisconnected(let d, _) = e, d.id == a.identity.deviceID.description { gone = true }
        }
        #expect(gone)
        // a starts again, with its state, on the same port.
        await StateWriter.shared.settleAll()
        let a2 = try Workstation("a", time: time, port: port, directory: a.directory)
        let runA2 = Task { try await a2.peers.run() }
        defer { runA2.cancel() }
        try await eventually(30, "a listens again") { await a2.peers.listenPort == port }
        try await never(within: 1, because: "b dials again only when its backoff is due") { await Self.connected(b.peers, to: a) }
        // The time moves on until b links (its retry may be scheduled only now, on a busy
        // machine): its backoff is at most a few seconds.
        try await eventually(30, "b links again once the given time reaches its backoff") {
            time.advance(by: .seconds(5))
            return await Self.connected(b.peers, to: a)
        }
    }
}
