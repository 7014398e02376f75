import Foundation
import HandoffControlAPI
import HandoffCore
import HandoffPeerProtocol
import Logging
import Testing
@testable import HandoffDaemon

/// The account service of two workstations, each statement carried by hand between their
/// recording links, with real keys and the time given: linking adds a device and trusts
/// it on both sides, a removal is in force at once and tells the link layer to close, what
/// does not verify is ignored, and the account is read back at start. (AccountLogTests has
/// the decisions alone; AccountTests the whole path between daemons.)
@Suite("Account service")
struct AccountServiceTests {
    struct Device {
        let identity: DeviceIdentity
        let trust: TrustStore
        let directory: String
        let service: AccountService

        init(time: ManualTime, directory: String? = nil) throws {
            let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("account-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            self.directory = directory
            identity = try DeviceIdentity.loadOrCreate(directory: directory)
            trust = TrustStore(stateDirectory: directory, logger: Logger(label: "test"))
            service = AccountService(identity: identity, store: AccountStore(stateDirectory: directory), trust: trust, clock: time, logger: Logger(label: "test"))
        }

        /// The link end the other device has to this one.
        func link(name: String) -> RecordingLink { RecordingLink(identity.deviceID, name: name) }
    }

    let time = ManualTime()

    /// Statements sent, as the blobs of `account` messages.
    static func statements(_ messages: [PeerMessage]) -> [[UInt8]] {
        messages.flatMap { m -> [[UInt8]] in
            guard case .account(let blobs) = m else { return [] }
            return blobs
        }
    }

    static func ids(_ members: [AccountLog.Member]) -> Set<DeviceID> { Set(members.map(\.id)) }

    @Test func linkingAddsTheDeviceAndAMemberIntroducedByAnotherIsTrusted() async throws {
        let (desk, laptop, tablet) = (try Device(time: time), try Device(time: time), try Device(time: time))
        let (toLaptop, toDesk) = (laptop.link(name: "laptop"), desk.link(name: "desk"))
        // desk and laptop link (trusted both ways): each adds the other.
        let change = await desk.service.linked(toLaptop, certificate: laptop.identity.certificateDER)
        #expect(change.trusted == [laptop.identity.deviceID] && change.removed.isEmpty, "the link layer dials it")
        #expect(await laptop.service.linked(toDesk, certificate: desk.identity.certificateDER).trusted == [desk.identity.deviceID])
        #expect(await laptop.service.heard(Self.statements(toLaptop.take()), from: toDesk) == AccountService.Change(), "both trusted already")
        #expect(await desk.service.heard(Self.statements(toDesk.take()), from: toLaptop) == AccountService.Change())
        let both = Set([desk.identity.deviceID, laptop.identity.deviceID])
        #expect(Self.ids(desk.service.current.membership.members) == both && Self.ids(laptop.service.current.membership.members) == both)
        // desk links with tablet: laptop hears of it through desk, and trusts tablet.
        let toTablet = tablet.link(name: "tablet")
        _ = await desk.service.linked(toTablet, certificate: tablet.identity.certificateDER)
        let passedOn = Self.statements(toLaptop.take())
        #expect(passedOn.count == 1, "the new statement goes to the members linked now")
        let heard = await laptop.service.heard(passedOn, from: toDesk)
        #expect(heard.trusted == [tablet.identity.deviceID] && laptop.trust.isTrusted(tablet.identity.deviceID))
        #expect(Self.ids(laptop.service.current.membership.members) == both.union([tablet.identity.deviceID]))
        // Heard again (the next link's opening): nothing new, nothing to do, nothing passed on.
        #expect(await laptop.service.heard(passedOn, from: toDesk) == AccountService.Change())
        #expect(toDesk.take().isEmpty)
    }

    @Test func aRemovalIsInForceAtOnceAndReachesTheRemovedDeviceFirst() async throws {
        let (desk, laptop, tablet) = (try Device(time: time), try Device(time: time), try Device(time: time))
        let (toLaptop, toTablet) = (laptop.link(name: "laptop"), tablet.link(name: "tablet"))
        _ = await desk.service.linked(toLaptop, certificate: laptop.identity.certificateDER)
        _ = await desk.service.linked(toTablet, certificate: tablet.identity.certificateDER)
        _ = (toLaptop.take(), toTablet.take())
        let (trustChange, change) = try await desk.service.remove(laptop.identity.deviceID.description)
        #expect(trustChange.removed == true && change.removed == [laptop.identity.deviceID], "the link layer closes its link")
        #expect(!desk.trust.isTrusted(laptop.identity.deviceID))
        #expect(Self.statements(toLaptop.take()).count == 1 && Self.statements(toTablet.take()).count == 1, "every member hears it, the removed one too")
        #expect(desk.service.current.membership.removed.map(\.id) == [laptop.identity.deviceID])
        await #expect(throws: HandoffError.self) { try await desk.service.remove(laptop.identity.deviceID.description) }
        await #expect(throws: HandoffError.self) { try await desk.service.remove(desk.identity.deviceID.description) }
        await #expect(throws: HandoffError.self) { try await desk.service.remove("not an id") }
        // Removed for good: linking again does not add it back.
        #expect(await desk.service.linked(laptop.link(name: "laptop"), certificate: laptop.identity.certificateDER) == AccountService.Change())
        #expect(!desk.trust.isTrusted(laptop.identity.deviceID))
    }

    @Test func whatDoesNotVerifyIsIgnoredAtAnAttackersScale() async throws {
        let (desk, laptop) = (try Device(time: time), try Device(time: time))
        let toDesk = desk.link(name: "desk")
        var garbage: [[UInt8]] = []
        for i in 0..<5_000 { garbage.append((0..<(i % 300)).map { _ in UInt8.random(in: 0...255) }) }
        #expect(await laptop.service.heard(garbage, from: toDesk) == AccountService.Change())
        // A real statement with one byte changed.
        _ = await desk.service.linked(laptop.link(name: "laptop"), certificate: laptop.identity.certificateDER)
        let real = try #require(desk.service.current.statements.last?.encoded)
        var altered = real
        altered[altered.count / 2] ^= 0x40
        #expect(await laptop.service.heard([altered], from: toDesk) == AccountService.Change())
        #expect(laptop.service.current.membership.members.map(\.id) == [laptop.identity.deviceID] && laptop.trust.all.isEmpty)
    }

    @Test func aCertificateOverTheCapIsNotAdded() async throws {
        let desk = try Device(time: time)
        let other = RecordingLink(7, name: "big")
        #expect(await desk.service.linked(other, certificate: Array(repeating: 1, count: AccountStatement.maximumCertificate + 1)) == AccountService.Change())
        #expect(desk.service.current.membership.members.count == 1)
    }

    @Test func theAccountIsReadBackAtStart() async throws {
        let (desk, laptop) = (try Device(time: time), try Device(time: time))
        _ = await desk.service.linked(laptop.link(name: "laptop"), certificate: laptop.identity.certificateDER)
        await StateWriter.shared.settleAll()
        let again = try Device(time: time, directory: desk.directory)
        #expect(Self.ids(again.service.current.membership.members) == [desk.identity.deviceID, laptop.identity.deviceID])
        let devices = await again.service.devices(ownName: "desk", connected: [laptop.identity.deviceID])
        #expect(devices.members.count == 2 && devices.members.contains { $0.connected && $0.name == "laptop" })
    }
}

extension RecordingLink {
    convenience init(_ id: DeviceID, name: String) {
        self.init(id.bytes, name: name)
    }
}
