import Foundation
import HandoffControlAPI
import HandoffCore
import HandoffStreamFrames
import HandoffTestSupport
import Logging
import NIOCore
import NIOEmbedded
import Testing
@testable import HandoffDaemon

/// The stream service's answers to an app here before any connection is dialled, with an
/// app connection of NIO's testing channel (its time moves only when told): why a stream
/// cannot start reaches the app as one error frame, naming what to do. (StreamSharesTests
/// has the shares alone; ContinuationStreamTests and ClipboardTests the streams between
/// daemons.)
@Suite("Peer stream service")
struct PeerStreamServiceTests {
    let time = ManualTime()
    let tap = EventTap()
    let directory: String
    let identity: DeviceIdentity
    let trust: TrustStore
    let registry: ActivityRegistry
    let clipboard: ClipboardService
    let service: PeerStreamService

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("streams-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let logger = Logger(label: "test")
        identity = try DeviceIdentity.loadOrCreate(directory: directory)
        trust = TrustStore(stateDirectory: directory, logger: logger)
        registry = ActivityRegistryTimeTests.registry(time)
        clipboard = ClipboardService(settings: .init(), own: PeerDevice(id: identity.deviceID.description, name: "desk"), isSessionOpen: { _ in true },
                                     events: tap.continuation, clock: time, timers: time, logger: logger)
        let keeping = KeepingService(identity: identity, registry: registry, restoration: nil, trust: trust, limits: ActivityLimits(), maximumFrameBytes: 1 << 20,
                                     store: KeptOfferStore(stateDirectory: directory), events: tap.continuation, clock: time, timers: time, logger: logger)
        let tls = try PeerTLS(identity: identity)
        service = PeerStreamService(own: identity.deviceID, deviceName: "desk", trust: trust, registry: registry,
                                    broker: StreamBroker(registry: registry, acceptTimeout: .seconds(10), timers: time), clipboard: clipboard, keeping: keeping,
                                    dialer: PeerDialer(tls: tls, own: identity.deviceID, settings: PeerServiceSettings()), maximumStreamsPerPeer: 2, logger: logger)
    }

    /// Runs `body` with an app's end on a testing channel; the error frame it was sent.
    func refusal(_ body: @escaping @Sendable (AppStreamEnd) async -> Void) async throws -> StreamFrame {
        let channel = NIOAsyncTestingChannel()
        let app = try await channel.testingEventLoop.executeInContext {
            try NIOAsyncChannel<StreamFrame, StreamFrame>(wrappingChannelSynchronously: channel)
        }
        return try await app.executeThenClose { inbound, outbound in
            let finished = channel.eventLoop.makePromise(of: Void.self)
            let end = AppStreamEnd(inbound: inbound, outbound: outbound, channel: channel, length: nil, finished: finished)
            let done = Task { await body(end) }
            let frame = try await channel.waitForOutboundWrite(as: StreamFrame.self)
            // The app reads its error and closes, as the client library does.
            try await channel.close()
            await done.value
            finished.succeed()
            return frame
        }
    }

    func expectError(_ frame: StreamFrame, _ code: String, mentioning text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .error(let c, let message) = frame else { Issue.record("not an error frame: \(frame)", sourceLocation: sourceLocation); return }
        #expect(c == code && message.contains(text), "\(c): \(message)", sourceLocation: sourceLocation)
    }

    @Test func aStreamOfAnActivityNobodyOffersSaysToContinueItFirst() async throws {
        let service = self.service
        let frame = try await refusal { await service.continueStream(.random(), app: $0, link: nil, continuedFrom: nil) }
        expectError(frame, "not_offered", mentioning: "handoffctl continue")
    }

    @Test func aStreamOfAnActivityFromASleepingWorkstationNamesIt() async throws {
        let laptop = DeviceID(bytes: Array(repeating: 2, count: 32))
        _ = try await trust.trust(laptop, name: "laptop", at: time.now())
        let service = self.service
        let frame = try await refusal { await service.continueStream(.random(), app: $0, link: nil, continuedFrom: laptop) }
        expectError(frame, "origin_unreachable", mentioning: "(laptop), which is not connected: wake it")
    }

    @Test func aPeerThatDidNotSayWhereItTakesStreamsIsUnreachable() async throws {
        let service = self.service
        let link = RecordingLink(2, name: "laptop")
        let frame = try await refusal { await service.continueStream(.random(), app: $0, link: link, continuedFrom: link.deviceID) }
        expectError(frame, "peer_unreachable", mentioning: "laptop did not say where it accepts streams")
    }

    @Test func aPeerWithItsShareOpenIsBusyAndFreedWhenOneEnds() async throws {
        let service = self.service
        let link = RecordingLink(2, name: "laptop")
        link.address.withLockedValue { $0 = try? SocketAddress(ipAddress: "127.0.0.1", port: 9) }
        #expect(await service.beginStream(link.deviceID, outgoing: true))
        #expect(await service.beginStream(link.deviceID, outgoing: true))
        let frame = try await refusal { await service.continueStream(.random(), app: $0, link: link, continuedFrom: nil) }
        expectError(frame, "busy", mentioning: "2 streams with laptop are open already")
        await service.endStream(link.deviceID, outgoing: true)
        #expect(await service.beginStream(link.deviceID, outgoing: true), "one ended: one more may open")
        #expect(await service.beginStream(link.deviceID, outgoing: false), "the other way counts apart")
    }

    @Test func aPasteOfACopyWhoseWorkstationWentAwayIsRefused() async throws {
        let service = self.service
        let link = RecordingLink(2, name: "laptop")
        await clipboard.linkUp(link)
        await service.linkUp(link)
        let offer = ClipboardOffer(id: .random(), formats: [ClipboardFormat(type: "text/plain", size: 3)], ageMilliseconds: 0, remainingMilliseconds: 60_000)
        await clipboard.heard(offer, from: link)
        await service.linkDown(link)  // the stream service heard first; the clipboard still has the copy
        let frame = try await refusal { await service.pasteClipboard(id: nil, type: nil, app: $0) }
        expectError(frame, "peer_unreachable", mentioning: "not connected any more")
        let nothing = try await refusal { await service.pasteClipboard(id: .random(), type: nil, app: $0) }
        guard case .error = nothing else { Issue.record("a copy that is not the newest cannot be pasted"); return }
    }
}
