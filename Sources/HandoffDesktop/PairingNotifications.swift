import HandoffClient
import HandoffControlAPI

/// A pairing notification and what its buttons do.
struct PairingNotice {
    enum Kind: Equatable {
        /// Another workstation is pairing: "Pair" opens the window here.
        case available
        /// Both show this code: "Same code" confirms it, "Stop" cancels.
        case code(String)
        /// Paired or stopped: nothing to do.
        case outcome
        /// A KDE Connect device (by its id) asks to pair: "Accept" or "Reject".
        case kdeConnect(String)
    }

    var id: UInt32
    var kind: Kind
}

/// Pairing from the desktop: when another workstation is pairing, a notification offers
/// to pair with it; once both show a code, another asks the user to confirm it, exactly
/// as `handoffctl pair` does in a terminal.
extension SessionAgent {
    func offerPairing(name: String, address: String) async {
        guard policy.enabled else { return }
        await showPairing(.available, summary: "Pair with \u{201C}\(name)\u{201D}?",
                          body: "\(name) (\(address)) is pairing. Pair, then check that both screens show the same code.",
                          actions: [("default", "Pair")])
    }

    func pairingChanged(_ status: PairingStatus) async {
        guard policy.enabled else { return }
        let name = status.peer?.name.isEmpty == false ? status.peer!.name : "the other workstation"
        switch status.state {
        case .code:
            guard let code = status.code, !status.confirmedHere, pairingNotice?.kind != .code(code) else { return }
            await showPairing(.code(code), summary: "Pairing code \(code.prefix(3)) \(code.suffix(3))",
                              body: "Does \(name) show \(code.prefix(3)) \(code.suffix(3)) too? Pair only if it does.",
                              actions: [("default", "Same code: pair"), ("stop", "Stop")])
        case .paired:
            await showPairing(.outcome, summary: "Paired with \(name)", body: "Each can now see and continue the other's activities.", actions: [])
        case .failed, .closed:
            // Only when this agent showed something about this pairing.
            guard let notice = pairingNotice, notice.kind != .outcome else { return }
            await showPairing(.outcome, summary: "Pairing stopped", body: status.message ?? "the pairing window closed", actions: [])
        case .waiting, .exchanging:
            break
        }
    }

    /// A KDE Connect device's pairing (handoffctl kdeconnect): its request asks the user,
    /// showing the key the device shows too; the outcome follows the request it answers.
    func kdeConnectPairingChanged(_ device: KDEConnectDevice, state: String, message: String?) async {
        guard policy.enabled else { return }
        switch state {
        case "requested-by-peer":
            let key = device.verificationKey ?? "?"
            await showPairing(.kdeConnect(device.id), summary: "\u{201C}\(device.name)\u{201D} asks to pair",
                              body: "Does \(device.name) show the key \(key)? Accept only if it does. Shared pages and text from it then become your activity.",
                              actions: [("default", "Accept"), ("reject", "Reject")])
        case "paired":
            await showPairing(.outcome, summary: "Paired with \(device.name)", body: "Pages and text shared from it become your activity; handoffctl continue --on sends yours to it.", actions: [])
        case "failed":
            guard case .kdeConnect(device.id)? = pairingNotice?.kind else { return }
            await showPairing(.outcome, summary: "Not paired with \(device.name)", body: message ?? "the request ended", actions: [])
        default:
            break
        }
    }

    func pairingAction(_ action: String) async {
        guard let notice = pairingNotice else { return }
        await notifications?.close(notice.id)
        pairingNotice = nil
        do {
            switch (notice.kind, action) {
            case (.available, "default"):
                _ = try await client.openPairing()
            case (.code(let code), "default"):
                _ = try await client.confirmPairing(code: code)
            case (.code, "stop"):
                _ = try await client.cancelPairing()
            case (.kdeConnect(let device), "default"):
                _ = try await client.kdeConnect(device, KDEConnectDeviceRequest(action: .accept))
            case (.kdeConnect(let device), "reject"):
                _ = try await client.kdeConnect(device, KDEConnectDeviceRequest(action: .reject))
            default:
                break
            }
        } catch {
            logger.warning("pairing from a notification failed", metadata: ["error": "\(error)"])
            await showPairing(.outcome, summary: "Pairing stopped", body: "\(error)", actions: [])
        }
    }

    private func showPairing(_ kind: PairingNotice.Kind, summary: String, body: String, actions: [(String, String)]) async {
        guard let notifications else { return }
        do {
            let id = try await notifications.notify(appName: "Handoff", summary: summary, body: body, icon: "handoff",
                                                    desktopEntry: nil, actions: actions, replacing: pairingNotice?.id)
            pairingNotice = PairingNotice(id: id, kind: kind)
        } catch {
            logger.warning("could not show a pairing notification", metadata: ["error": "\(error)"])
        }
    }
}
