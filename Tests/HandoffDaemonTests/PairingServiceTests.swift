import Foundation
import HandoffControlAPI
import HandoffCore
import HandoffTestSupport
import Logging
import NIOConcurrencyHelpers
import Testing
@testable import HandoffDaemon

/// The pairing service as the control API and the link layer drive it, with the time
/// given: the window opens and closes at its time (the advertisement's tag with it), an
/// advertisement or an address is dialled, a dial to the address the user gave is tried
/// again only when its interval is due, and the user's mistakes get a clear error.
/// (PairingTests has the decisions alone; PairingByCodeTests and PairingOnLoopbackTests
/// the whole pairing between daemons.)
@Suite("Pairing service")
struct PairingServiceTests {
    let time = ManualTime()
    let pairing: PairingService
    let accounts: AccountService
    /// What the service asked of the link layer, in order.
    let asked = NIOLockedValueBox<[PairingService.Action]>([])
    let reader: Task<Void, Never>

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pairing-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let logger = Logger(label: "test")
        let identity = try DeviceIdentity.loadOrCreate(directory: directory)
        let trust = TrustStore(stateDirectory: directory, logger: logger)
        accounts = AccountService(identity: identity, store: AccountStore(stateDirectory: directory), trust: trust, clock: time, logger: logger)
        pairing = PairingService(own: identity.deviceID, trust: trust, accounts: accounts, registry: ActivityRegistryTimeTests.registry(time),
                                 clock: time, timers: time, logger: logger)
        let (actions, asked) = (pairing.actions, asked)
        reader = Task { for await a in actions { asked.withLockedValue { $0.append(a) } } }
    }

    /// What was asked since the last call, once `count` actions came.
    func take(_ count: Int) async throws -> [PairingService.Action] {
        try await eventually("\(count) actions asked of the link layer") { asked.withLockedValue { $0.count } >= count }
        return asked.withLockedValue { all in
            defer { all = [] }
            return all
        }
    }

    @Test func theWindowOpensWithItsTagAndClosesAtItsTime() async throws {
        #expect(pairing.advertisedTag.withLockedValue { $0 } == nil && !pairing.windowOpen.withLockedValue { $0 })
        let status = try await pairing.open(address: nil)
        #expect(status.state == .waiting && status.expiresAt == time.now().adding(nanoseconds: PairingWindow.duration))
        #expect(try await take(2) == [.advertise, .reconsider], "the tag is published and the advertisements seen are considered")
        let tag = try #require(pairing.advertisedTag.withLockedValue { $0 })
        #expect(pairing.windowOpen.withLockedValue { $0 }, "the TLS verifier lets a stranger in to pair")
        _ = try await pairing.open(address: nil)
        #expect(try await take(1) == [.reconsider], "opened again: the same window")
        #expect(pairing.advertisedTag.withLockedValue { $0 } == tag)
        time.advance(by: .nanoseconds(PairingWindow.duration - 1))
        #expect(await pairing.isOpen())
        time.advance(by: .nanoseconds(1))
        #expect(try await take(1) == [.advertise], "closed at its time: the tag goes")
        #expect(pairing.advertisedTag.withLockedValue { $0 } == nil && !pairing.windowOpen.withLockedValue { $0 })
        let (state, open) = (await pairing.status().state, await pairing.isOpen())
        #expect(state != .waiting && !open)
    }

    @Test func theSmallerTagDialsAndAClosedWindowOnlyAnnounces() async throws {
        let closed = PairingCandidate(tag: "zzzz", address: "192.0.2.7", port: 4000, name: "laptop")
        await pairing.consider([closed])
        _ = try await pairing.open(address: nil)
        _ = try await take(2)
        let ours = try #require(pairing.advertisedTag.withLockedValue { $0 })
        let bigger = PairingCandidate(tag: ours + "z", address: "192.0.2.8", port: 4001, name: "laptop")
        let smaller = PairingCandidate(tag: "", address: "192.0.2.9", port: 4002, name: "tablet")
        await pairing.consider([bigger, smaller])
        #expect(try await take(1) == [.dial(address: "192.0.2.8", port: 4001, tag: ours + "z", given: nil)], "ours is smaller: this side dials, once")
        await pairing.consider([bigger])
        try await never(within: 0.1, because: "one dial per tag at a time") { asked.withLockedValue { !$0.isEmpty } }
    }

    @Test func anAddressTheUserGaveIsDialledAgainOnlyWhenItsIntervalIsDue() async throws {
        _ = try await pairing.open(address: "192.0.2.5:4242")
        #expect(try await take(2) == [.advertise, .dial(address: "192.0.2.5", port: 4242, tag: nil, given: "192.0.2.5:4242")])
        await pairing.dialFailed(.unreachable(host: "192.0.2.5", port: 4242, error: "connection refused"), tag: nil, address: "192.0.2.5", port: 4242,
                                 given: "192.0.2.5:4242")
        #expect(await pairing.status().message?.contains("192.0.2.5") == true, "the user reads why")
        time.advance(by: .nanoseconds(PairingService.redialInterval - 1))
        try await never(within: 0.1, because: "not before its interval") { asked.withLockedValue { !$0.isEmpty } }
        time.advance(by: .nanoseconds(1))
        #expect(try await take(1) == [.dial(address: "192.0.2.5", port: 4242, tag: nil, given: "192.0.2.5:4242")])
        // Cancelled: no more dials.
        _ = await pairing.cancel()
        #expect(try await take(1) == [.advertise])
        await pairing.dialFailed(.notPairingThere, tag: nil, address: "192.0.2.5", port: 4242, given: "192.0.2.5:4242")
        time.advance(by: .seconds(10))
        try await never(within: 0.1, because: "the window is closed") { asked.withLockedValue { !$0.isEmpty } }
        #expect(time.pending == 0)
    }

    @Test func theUsersMistakesGetAClearError() async throws {
        await #expect(throws: HandoffError.self) { try await pairing.open(address: "no port") }
        await #expect(throws: HandoffError.self) { try await pairing.open(address: "host:99999") }
        do {
            _ = try await pairing.confirm(code: "12345")
            Issue.record("a code of 5 digits is refused")
        } catch { #expect(error.message.contains("6 digits")) }
        do {
            _ = try await pairing.confirm(code: "123 456")
            Issue.record("no code is shown yet")
        } catch { #expect(error.code == "no_code" && error.message.contains("handoffctl pair")) }
        #expect(await pairing.cancel().state == .closed, "cancelling a closed window changes nothing")
    }
}
