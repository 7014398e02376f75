import HandoffCore
import HandoffControlAPI

/// The account of devices on the wire and in force (Docs/PeerProtocol.md §17): members
/// send each other all their statements when a link comes up and new ones as they are
/// made or heard; the trust store follows the membership (a member is trusted, a removed
/// device is not, for good). The decisions are AccountLog's.
extension PeerService {
    /// A link came up: make sure the peer is in the account (trusted both ways is as good
    /// as paired), and tell it everything.
    func linked(_ link: PeerLink, certificate: [UInt8]) async {
        if !account.membership.members.contains(where: { $0.id == link.deviceID }) {
            if certificate.count <= AccountStatement.maximumCertificate {
                await addToAccount(link.deviceID, name: link.deviceName, certificate: certificate)
            } else {
                logger.warning("not added to the account: its certificate is over 2048 bytes", metadata: ["peer": "\(link.deviceName)"])
            }
        }
        Self.sendAccount(account.statements, to: link)
        if let key = rotation.keys.first { link.send(.advertisementKey(generation: key.generation, key: key.key)) }
        await keeping.linkUp(link)
    }

    /// Members converge on the greatest key; a new one means a new advertisement now.
    func heardAdvertisementKey(_ key: AdvertisementKey, from link: PeerLink) {
        guard let current = rotation.keys.first, current.isSupersededBy(key) else { return }
        adoptAdvertisementKey(key, except: link)
    }

    /// Makes `key` current (the old one stays as the previous: members away during the
    /// change still advertise with it), tells the other members, and re-advertises.
    func adoptAdvertisementKey(_ key: AdvertisementKey, except: PeerLink?) {
        rotation.keys = [key] + rotation.keys.prefix(1)
        accountStore.keys.save(rotation.keys)
        // Never to a device no longer trusted (a removed one whose link is still closing).
        for link in links.values where link !== except && trust.isTrusted(link.deviceID) {
            link.send(.advertisementKey(generation: key.generation, key: key.key))
        }
        if avahi != nil { rotateAdvertisement() }
    }

    /// In messages of at most 200 statements (about 450 KB), well inside a frame.
    static func sendAccount(_ statements: [AccountStatement], to link: PeerLink) {
        var rest = statements[...]
        while !rest.isEmpty {
            link.send(.account(rest.prefix(200).map(\.encoded)))
            rest = rest.dropFirst(200)
        }
    }

    func addToAccount(_ id: DeviceID, name: String, certificate: [UInt8]) async {
        guard !isRemoved(id) else { return }
        do {
            let s = try account.append(.add, subject: id, name: name, certificate: certificate, at: clock.now(), key: identity.signingKey)
            logger.info("added to the account", metadata: ["name": "\(name)", "id": "\(id.shortID)"])
            await accountChanged([s], except: nil)
        } catch {
            logger.error("could not sign an account statement", metadata: ["error": "\(error)"])
        }
    }

    func heardAccount(_ blobs: [[UInt8]], from link: PeerLink) async {
        var statements: [AccountStatement] = []
        for blob in blobs {
            do { statements.append(try AccountStatement(decoding: blob)) } catch {
                logger.info("ignored an account statement", metadata: ["peer": "\(link.deviceName)", "why": "\(error)"])
            }
        }
        let accepted = account.merge(statements)
        guard !accepted.isEmpty else { return }
        await accountChanged(accepted, except: link)
    }

    /// Saves, tells the other members, and brings trust in line with the membership.
    private func accountChanged(_ new: [AccountStatement], except: PeerLink?) async {
        accountStore.save(account.statements)
        for link in links.values where link !== except { Self.sendAccount(new, to: link) }
        await reconcileTrust()
    }

    /// Trust follows the membership: members are trusted, removed devices are not (also at
    /// start, in case an earlier untrust could not be written to disk).
    func reconcileTrust() async {
        let (members, removed) = account.membership
        for m in members where m.id != identity.deviceID && !trust.isTrusted(m.id) {
            do {
                try await trust.trust(m.id, name: m.name, at: clock.now())
                logger.info("trusted as a member of the account", metadata: ["name": "\(m.name)", "id": "\(m.id.shortID)"])
                trusted(m.id)
            } catch {
                logger.error("could not save the trusted devices", metadata: ["error": "\(error)"])
            }
        }
        for r in removed where r.id != identity.deviceID && trust.isTrusted(r.id) {
            trust.untrust(r.id)  // in force even if the file cannot be written
            // Its link closes once what is queued on it is written: the statement of its
            // removal, so that it knows (and its doctor can say so). One that stops
            // reading is not waited for.
            if let link = links[r.id] {
                link.closeWhenSent()
                _ = timers.schedule(in: .seconds(2)) { link.close() }
            }
            await keeping.left(r.id)
            logger.info("removed from the account: no longer trusted", metadata: ["name": "\(r.name)", "id": "\(r.id.shortID)"])
        }
    }

    // MARK: - The control API's side

    func accountDevices() -> AccountDevices {
        let (members, removed) = account.membership
        func name(_ id: DeviceID) -> String {
            id == identity.deviceID ? deviceName : (trust.entry(id)?.name.nonEmpty ?? members.first { $0.id == id }?.name ?? "")
        }
        func device(_ id: DeviceID?) -> (id: String, name: String)? { id.map { ($0.description, name($0)) } }
        return AccountDevices(
            members: members.map { m in
                .init(id: m.id.description, name: name(m.id), isSelf: m.id == identity.deviceID, connected: links[m.id] != nil,
                      introducedBy: device(m.introducedBy), introducedAt: m.introducedAt)
            },
            removed: removed.map { r in .init(id: r.id.description, name: r.name, removedBy: device(r.removedBy), removedAt: r.removedAt) }
        )
    }

    /// Signs "`id` is not a member": every member that hears it stops trusting it.
    func removeFromAccount(_ text: String) async throws(HandoffError) -> TrustChange {
        let id: DeviceID
        do { id = try DeviceID(parsing: text) } catch { throw HandoffError.badRequest("\(error.description); `handoffctl devices` lists the IDs") }
        guard id != identity.deviceID else {
            throw HandoffError.badRequest("that is this workstation: remove it from another member (`handoffctl remove ID` there)")
        }
        let (members, removed) = account.membership
        if removed.contains(where: { $0.id == id }) {
            throw HandoffError(.conflict, code: "already_removed", message: "\(id) was removed already")
        }
        guard let member = members.first(where: { $0.id == id }) else {
            throw HandoffError(.notFound, code: "not_a_member", message: "\(id) is not a member of your account (`handoffctl devices` lists them)")
        }
        do {
            let s = try account.append(.remove, subject: id, name: "", certificate: [], at: clock.now(), key: identity.signingKey)
            // Sent before the removed device's link closes, so it hears it too.
            await accountChanged([s], except: nil)
            // A new advertisement key the removed device never hears: it cannot recognise
            // the members' advertisements any more.
            adoptAdvertisementKey(.random(generation: (rotation.keys.first?.generation ?? 0) + 1), except: nil)
        } catch {
            throw HandoffError(.internal, code: "internal", message: "could not sign the removal: \(error)")
        }
        return TrustChange(deviceID: id.description, name: member.name, removed: true)
    }

    func isRemoved(_ id: DeviceID) -> Bool { account.membership.removed.contains { $0.id == id } }

    /// Whether this workstation may take a new identity (`pair --new-identity`): when it
    /// was removed from the account, or is alone in it. While others still count it a
    /// member they would keep its old identity, so that takes `force`. Returns the
    /// identity to set aside.
    func renewalCheck(force: Bool) throws(HandoffError) -> DeviceID {
        let own = identity.deviceID
        // A pairing under way would end with the other side trusting the identity about
        // to be set aside.
        guard !pairing.isOpen(at: clock.now()) else {
            throw HandoffError(.conflict, code: "pairing_open", message: "a pairing window is open here: close it first (`handoffctl pair --cancel`), then ask for a new identity")
        }
        let others = account.membership.members.filter { $0.id != own }
        guard force || isRemoved(own) || others.isEmpty else {
            let names = others.prefix(3).map { trust.entry($0.id)?.name.nonEmpty ?? $0.name.nonEmpty ?? $0.id.shortID }.joined(separator: ", ")
            throw HandoffError(.conflict, code: "still_a_member", message:
                "this workstation is still a member of your account with \(others.count) other\(others.count == 1 ? "" : "s") (\(names)), which would go on trusting its old identity; "
                + "remove it from one of them first (`handoffctl remove \(own)` there), or renew anyway with --force and remove the old identity afterwards")
        }
        return own
    }
}
