import HandoffCore
import HandoffControlAPI

/// The link layer's side of the account (`AccountService` holds it): what a link hears
/// when it comes up, the advertisement key members share, and what a change of the
/// membership asks of the links (dial the newly trusted, close the removed).
extension PeerService {
    /// The account as it stands (read without waiting).
    var account: AccountLog { accounts.current }

    /// A link came up: the account first (the peer is added if it is not a member yet),
    /// then the advertisement key, then the kept offers' index.
    func linked(_ link: PeerLink, certificate: [UInt8]) async {
        await perform(await accounts.linked(link, certificate: certificate))
        if let key = rotation.keys.first { link.send(.advertisementKey(generation: key.generation, key: key.key)) }
        await keeping.linkUp(link)
    }

    /// Does what a change of the membership asks: trusted devices are dialled; a removed
    /// device's link closes once what is queued on it is written (the statement of its
    /// removal, so that it knows and its doctor can say so; one that stops reading is not
    /// waited for), and what was kept for it goes.
    func perform(_ change: AccountService.Change) async {
        for id in change.trusted { trusted(id) }
        for id in change.removed {
            if let link = links[id] {
                link.closeWhenSent()
                _ = timers.schedule(in: .seconds(2)) { link.close() }
            }
            await keeping.left(id)
        }
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

    /// Signs "`id` is not a member" and sends it; then a new advertisement key the removed
    /// device never hears: it cannot recognise the members' advertisements any more.
    func removeFromAccount(_ text: String) async throws(HandoffError) -> TrustChange {
        let (trustChange, change) = try await accounts.remove(text)
        await perform(change)
        adoptAdvertisementKey(.random(generation: (rotation.keys.first?.generation ?? 0) + 1), except: nil)
        return trustChange
    }

    func accountDevices() async -> AccountDevices {
        await accounts.devices(ownName: deviceName, connected: Set(links.keys))
    }

    func isRemoved(_ id: DeviceID) -> Bool { account.membership.removed.contains { $0.id == id } }

    /// Whether this workstation may take a new identity (`pair --new-identity`): when it
    /// was removed from the account, or is alone in it. While others still count it a
    /// member they would keep its old identity, so that takes `force`. Returns the
    /// identity to set aside.
    func renewalCheck(force: Bool) async throws(HandoffError) -> DeviceID {
        let own = identity.deviceID
        // A pairing under way would end with the other side trusting the identity about
        // to be set aside.
        guard await !pairing.isOpen() else {
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
