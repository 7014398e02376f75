import HandoffAvahi
import HandoffCore
import HandoffControlAPI
import HandoffPeerProtocol
import NIOCore
import NIOPosix

/// The link layer's side of pairing (`PairingService` holds the window and the exchange):
/// what it asks of the advertisement and of dialling, the pairing advertisements mDNS
/// shows, and the dial to pair, whose connection goes back to the pairing service after
/// the hellos.
extension PeerService {
    /// Does what the pairing service asks.
    func perform(_ action: PairingService.Action) async {
        switch action {
        case .advertise:
            publishAdvertisement()
        case .dial(let address, let port, let tag, let given):
            enqueue(.dialToPair(address: address, port: port, tag: tag, given: given))
        case .reconsider:
            await pairing.consider(pairingCandidates(services.keys))
        case .account(let change):
            await perform(change)
        case .paired(let id, let address, let domain):
            if let address { addStaticPeer(address, domain: domain) }
            trusted(id)
        }
    }

    /// Other workstations' pairing advertisements among these instances.
    func pairingCandidates<Keys: Sequence<ServiceKey>>(_ keys: Keys) -> [PairingCandidate] {
        keys.compactMap { key in
            guard let record = services[key], !record.isSelf, let tag = record.service.txt["pair"] else { return nil }
            return PairingCandidate(tag: tag, address: record.service.address, port: Int(record.service.port), name: record.service.txt["n"] ?? "")
        }
    }

    /// "HOST:PORT" or "[IPv6]:PORT".
    static func hostAndPort(_ text: String) throws(HandoffError) -> (host: String, port: Int) {
        var host = Substring(text), port: Substring = ""
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            port = text[close...].dropFirst().drop { $0 == ":" }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, host.utf8.count <= 253, let p = Int(port), (1...65535).contains(p) else {
            throw HandoffError.badRequest("give the other workstation's address as HOST:PORT (its port is in `handoffctl status` there; `peer-port` in handoffd.conf fixes it)")
        }
        return (String(host), p)
    }

    nonisolated func dialToPair(address host: String, port: Int, tag: String?, given: String?) async {
        do {
            let target = try await PeerService.resolve(host, port: port)
            // Any certificate but our own: the code, not a pinned ID, authenticates it.
            let channel = try await dialer.connect(target, on: group, isTrusted: { _ in true })
            // Ended before the exchange began (refused at the handshake, or in its first
            // message): say so, or `pair` would wait in silence until the window closes.
            if let early = await serve(channel, dialled: nil, purpose: .pair, pairingAddress: given, pairingHost: host) {
                await pairing.dialFailed(PairingFailure(early), tag: tag, address: host, port: port, given: given)
            }
        } catch {
            await pairing.dialFailed(.unreachable(host: host, port: port, error: DialFailure(error).description), tag: tag, address: host, port: port, given: given)
        }
    }

}
