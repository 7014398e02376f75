import HandoffAvahi
import HandoffCore
import HandoffPeerProtocol

/// This workstation's private advertisement (PeerProtocol.md §3.1): nothing stable and
/// nothing that names the device. Each rotation (every `period`, aligned to its multiples
/// so members rotate together, and whenever the key or the addresses change) takes a new
/// random instance name, SRV host name, nonce and change hint; TXT `t` carries a tag only
/// the account's members can make or check. A value: the time comes with each call.
struct AdvertisementRotation {
    /// The account's shared key, current first, then the previous one (members away during
    /// a change still advertise with it).
    var keys: [AdvertisementKey]
    let periodSeconds: Int64
    private(set) var name = PrivateAdvertisement.randomHex(6)
    private(set) var host = PrivateAdvertisement.randomHex(6)
    private(set) var nonce = Self.randomNonce()
    private(set) var epoch: Int64 = 0
    /// Tells browsers something changed (`h`), not what.
    private(set) var hint = Self.randomHint()

    init(keys: [AdvertisementKey], periodSeconds: Int64) {
        self.keys = keys
        self.periodSeconds = max(10, periodSeconds)
    }

    /// A new name, host name, nonce and hint; returns the seconds until the next rotation.
    mutating func rotate(at now: Timestamp) -> Int64 {
        name = PrivateAdvertisement.randomHex(6)
        host = PrivateAdvertisement.randomHex(6)
        nonce = Self.randomNonce()
        epoch = PrivateAdvertisement.epoch(at: now)
        hint = Self.randomHint()
        let next = (now.seconds / periodSeconds + 1) * periodSeconds
        return max(1, next - now.seconds)
    }

    /// Something changed (our offer): a new hint, the rest as it is.
    mutating func changed() { hint = Self.randomHint() }

    /// The TXT record; while pairing, with the window's tag and the name the user will see.
    func txt(pairing: (tag: String, deviceName: String)?) -> [(String, String)] {
        var txt = [("v", "\(PeerHello.currentVersion)"), ("h", hint),
                   ("t", PrivateAdvertisement.txt(key: keys.first?.key ?? [], epoch: epoch, nonce: nonce))]
        if let pairing {
            txt.append(("pair", pairing.tag))
            txt.append(("n", AccountStatement.cut(pairing.deviceName, toBytes: 64)))
        }
        return txt
    }

    /// Whether an advertisement's `t` was made with the account's key (current or previous).
    func isMember(advertising t: String?, at now: Timestamp) -> Bool {
        guard let t else { return false }
        return PrivateAdvertisement.verifies(t, keys: keys.map(\.key), epoch: PrivateAdvertisement.epoch(at: now))
    }

    /// The instance name a link's hello states: the advertised one (Avahi may have renamed
    /// it after a collision), or the one being registered after a rotation.
    func instance(advertised: String?) -> String {
        if let advertised, advertised.hasPrefix(name) { return advertised }
        return name
    }

    private static func randomNonce() -> [UInt8] { Array(AdvertisementKey.random(generation: 0).key.prefix(8)) }
    private static func randomHint() -> String { String(ActivityID.random().rawValue.prefix(8)) }
}
