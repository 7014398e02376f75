import HandoffControlAPI
import HandoffCore
import HandoffPeerProtocol
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// The account of devices on the wire and in force (Docs/PeerProtocol.md §17): members
/// send each other all their statements when a link comes up and new ones as they are
/// made or heard; the trust store follows the membership (a member is trusted, a removed
/// device is not, for good). The decisions are `AccountLog`'s; this service signs, saves,
/// sends and brings trust in line, and returns what the link layer must do about it (an
/// `AccountChange`: dial the newly trusted, close the removed). The log as it stands is
/// readable without waiting (`current`): dialling and trust checks read it often.
actor AccountService: Service, CustomStringConvertible {
    nonisolated var description: String { "account" }
    private let identity: DeviceIdentity
    private let store: AccountStore
    private let trust: TrustStore
    private let clock: any WallClock
    private let logger: Logger
    private var log: AccountLog
    private nonisolated let published: NIOLockedValueBox<AccountLog>
    private var links = LinkedPeers()

    /// What the link layer does after the account changed.
    struct Change: Sendable, Equatable {
        /// Trusted now as members: dial them (what was refused as untrusted may be welcome).
        var trusted: [DeviceID] = []
        /// No longer trusted, for good: their links close once the statement of their
        /// removal is written, and what was kept for them goes.
        var removed: [DeviceID] = []
    }

    /// Reads the account's file (statements that do not verify are dropped).
    init(identity: DeviceIdentity, store: AccountStore, trust: TrustStore, clock: any WallClock, logger: Logger) {
        self.identity = identity
        self.store = store
        self.trust = trust
        self.clock = clock
        self.logger = logger
        var log = AccountLog(own: identity.deviceID, ownCertificate: identity.certificateDER)
        _ = log.merge(store.load(logger: logger))
        self.log = log
        published = NIOLockedValueBox(log)
    }

    /// Nothing runs until asked: every change is saved as it is made.
    func run() async throws {
        try? await gracefulShutdown()
    }

    /// The log as it stands.
    nonisolated var current: AccountLog { published.withLockedValue { $0 } }

    // MARK: - Links

    /// A link came up: make sure the peer is in the account (trusted both ways is as good
    /// as paired), and tell it everything.
    func linked(_ link: any LinkEnd, certificate: [UInt8]) async -> Change {
        links.up(link)
        var change = Change()
        if !log.membership.members.contains(where: { $0.id == link.deviceID }) {
            if certificate.count <= AccountStatement.maximumCertificate {
                change = await add(link.deviceID, name: link.deviceName, certificate: certificate)
            } else {
                logger.warning("not added to the account: its certificate is over 2048 bytes", metadata: ["peer": "\(link.deviceName)"])
            }
        }
        Self.send(log.statements, to: link)
        return change
    }

    func linkDown(_ link: any LinkEnd) { links.down(link) }

    /// Statements a member sent: what is new is kept, passed on, and put in force.
    func heard(_ blobs: [[UInt8]], from link: any LinkEnd) async -> Change {
        var statements: [AccountStatement] = []
        for blob in blobs {
            do { statements.append(try AccountStatement(decoding: blob)) } catch {
                logger.info("ignored an account statement", metadata: ["peer": "\(link.deviceName)", "why": "\(error)"])
            }
        }
        let accepted = log.merge(statements)
        guard !accepted.isEmpty else { return Change() }
        return await changed(accepted, except: link)
    }

    /// In messages of at most 200 statements (about 450 KB), well inside a frame.
    static func send(_ statements: [AccountStatement], to link: any LinkEnd) {
        var rest = statements[...]
        while !rest.isEmpty {
            link.send(.account(rest.prefix(200).map(\.encoded)))
            rest = rest.dropFirst(200)
        }
    }

    // MARK: - Changes made here

    /// Signs "`id` is a member" (a device paired, or linked while trusted both ways).
    func add(_ id: DeviceID, name: String, certificate: [UInt8]) async -> Change {
        guard !log.membership.removed.contains(where: { $0.id == id }) else { return Change() }
        do {
            let s = try log.append(.add, subject: id, name: name, certificate: certificate, at: clock.now(), key: identity.signingKey)
            logger.info("added to the account", metadata: ["name": "\(name)", "id": "\(id.shortID)"])
            return await changed([s], except: nil)
        } catch {
            logger.error("could not sign an account statement", metadata: ["error": "\(error)"])
            return Change()
        }
    }

    /// Signs "`id` is not a member": every member that hears it stops trusting it. The
    /// statement is sent before the removed device's link closes, so it hears it too.
    func remove(_ text: String) async throws(HandoffError) -> (TrustChange, Change) {
        let id: DeviceID
        do { id = try DeviceID(parsing: text) } catch { throw HandoffError.badRequest("\(error.description); `handoffctl devices` lists the IDs") }
        guard id != identity.deviceID else {
            throw HandoffError.badRequest("that is this workstation: remove it from another member (`handoffctl remove ID` there)")
        }
        let (members, removed) = log.membership
        if removed.contains(where: { $0.id == id }) {
            throw HandoffError(.conflict, code: "already_removed", message: "\(id) was removed already")
        }
        guard let member = members.first(where: { $0.id == id }) else {
            throw HandoffError(.notFound, code: "not_a_member", message: "\(id) is not a member of your account (`handoffctl devices` lists them)")
        }
        let s: AccountStatement
        do { s = try log.append(.remove, subject: id, name: "", certificate: [], at: clock.now(), key: identity.signingKey) } catch {
            throw HandoffError(.internal, code: "internal", message: "could not sign the removal: \(error)")
        }
        return (TrustChange(deviceID: id.description, name: member.name, removed: true), await changed([s], except: nil))
    }

    /// Saves, tells the other members, and brings trust in line with the membership.
    private func changed(_ new: [AccountStatement], except: (any LinkEnd)?) async -> Change {
        published.withLockedValue { $0 = log }
        store.save(log.statements)
        for link in links.all where link !== except { Self.send(new, to: link) }
        return await reconcileTrust()
    }

    /// Trust follows the membership: members are trusted, removed devices are not (also at
    /// start, in case an earlier untrust could not be written to disk).
    func reconcileTrust() async -> Change {
        var change = Change()
        let (members, removed) = log.membership
        for m in members where m.id != identity.deviceID && !trust.isTrusted(m.id) {
            do {
                try await trust.trust(m.id, name: m.name, at: clock.now())
                logger.info("trusted as a member of the account", metadata: ["name": "\(m.name)", "id": "\(m.id.shortID)"])
                change.trusted.append(m.id)
            } catch {
                logger.error("could not save the trusted devices", metadata: ["error": "\(error)"])
            }
        }
        for r in removed where r.id != identity.deviceID && trust.isTrusted(r.id) {
            trust.untrust(r.id)  // in force even if the file cannot be written
            change.removed.append(r.id)
            logger.info("removed from the account: no longer trusted", metadata: ["name": "\(r.name)", "id": "\(r.id.shortID)"])
        }
        return change
    }

    // MARK: - The control API's side

    /// The members and the removed, named as the user named them; `connected`: linked now.
    func devices(ownName: String, connected: Set<DeviceID>) -> AccountDevices {
        let (members, removed) = log.membership
        let (own, trust) = (identity.deviceID, self.trust)
        func name(_ id: DeviceID) -> String {
            id == own ? ownName : (trust.entry(id)?.name.nonEmpty ?? members.first { $0.id == id }?.name ?? "")
        }
        func device(_ id: DeviceID?) -> (id: String, name: String)? { id.map { ($0.description, name($0)) } }
        return AccountDevices(
            members: members.map { m in
                .init(id: m.id.description, name: name(m.id), isSelf: m.id == own, connected: connected.contains(m.id),
                      introducedBy: device(m.introducedBy), introducedAt: m.introducedAt)
            },
            removed: removed.map { r in .init(id: r.id.description, name: r.name, removedBy: device(r.removedBy), removedAt: r.removedAt) }
        )
    }
}
