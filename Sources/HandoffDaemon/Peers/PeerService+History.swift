import HandoffCore
import HandoffPeerProtocol
import Logging

/// Deleting this workstation's saved activities from the histories of the account
/// (Docs/PeerProtocol.md §20, LocalAPI.md §19): by persistent identifier, or all of them.
/// A peer can make another forget only its own activities: the device an entry came from
/// is the link's, never a field of the message.
extension PeerService {
    /// Forgets this workstation's activities with these persistent identifiers (nil: all of
    /// them) in the history here, and asks every linked workstation that speaks version 4
    /// to do the same. Returns how many entries went here, and how many workstations were asked.
    func forgetOwnHistory(_ ids: [String]?) async throws(HandoffError) -> (removed: Int, asked: Int) {
        guard let history else {
            throw HandoffError(.conflict, code: "history_off", message: "the history is turned off on this workstation (history-days = 0)")
        }
        let removed = try await history.forget(device: identity.deviceID.description, persistentIdentifiers: ids)
        var asked = 0
        for link in links.values where link.version >= 4 {
            link.send(.forgetHistory(persistentIdentifiers: ids))
            asked += 1
        }
        logger.info("forgot saved activities", metadata: ["identifiers": "\(ids.map { "\($0.count)" } ?? "all")", "removed": "\(removed)", "asked": "\(asked)"])
        return (removed, asked)
    }

    /// A peer asks this workstation to forget its activities.
    func forgetHistory(of link: PeerLink, _ ids: [String]?) {
        guard let history else { return }
        let device = link.deviceID.description, name = link.deviceName, logger = self.logger
        Task {
            do {
                let removed = try await history.forget(device: device, persistentIdentifiers: ids)
                logger.info("forgot a peer's saved activities, as it asked", metadata: ["peer": "\(name)", "removed": "\(removed)"])
            } catch {
                logger.notice("could not forget a peer's saved activities", metadata: ["peer": "\(name)", "error": "\(error)"])
            }
        }
    }
}
