import Crypto
import HandoffCore
import Logging

/// The key the account's members share to recognise each other's advertisements
/// (Docs/PeerProtocol.md §3.1): 32 random bytes and a generation. Members exchange it on
/// their links and keep the greatest (generation, then bytes); removing a device makes a
/// new one of the next generation, which the removed device never hears.
struct AdvertisementKey: Sendable, Equatable {
    let generation: UInt64
    let key: [UInt8]

    static func random(generation: UInt64) -> AdvertisementKey {
        var g = SystemRandomNumberGenerator()
        return AdvertisementKey(generation: generation, key: (0..<32).map { _ in UInt8.random(in: 0...255, using: &g) })
    }

    /// How far above this key's generation another may be and still be taken. Honest
    /// members step one generation per removal; a hostile member that could push the
    /// generation to the largest the wire carries (2^63 - 1) would leave no higher one for
    /// the renewal at its own removal, and keep every member on its key.
    static let maximumStep: UInt64 = 1 << 16

    /// Whether `other` should replace this one.
    func isSupersededBy(_ other: AdvertisementKey) -> Bool {
        if other.generation > generation { return other.generation - generation <= Self.maximumStep }
        return other.generation == generation && key.lexicographicallyPrecedes(other.key)
    }
}

/// `advertisement-key.json` in the state directory (mode 0600): the current key and the
/// previous one (members that were away during a rotation still advertise with it).
struct AdvertisementKeyStore: Sendable {
    let path: String

    static let fileName = "advertisement-key.json"

    init(stateDirectory: String) { path = stateDirectory + "/" + Self.fileName }

    /// A file that cannot be read is kept aside and logged: the account's members hand the
    /// current key over again on their next link.
    func load(logger: Logger) -> [AdvertisementKey] {
        let bytes: [UInt8]?
        do { bytes = try AtomicFile.read(path) } catch {
            logger.error("the advertisement key could not be read", metadata: ["file": "\(path)", "error": "\(error)"])
            return []
        }
        guard let bytes else { return [] }
        guard let doc = try? JSONValue(parsing: bytes), let items = doc.objectValue?["keys"]?.arrayValue else {
            let aside = AtomicFile.keepAside(path)
            logger.error("the advertisement key could not be read; kept aside, the account's members hand it over again",
                         metadata: ["file": "\(path)", "kept as": "\(aside)"])
            return []
        }
        return items.compactMap { v in
            guard let o = v.objectValue, case .integer(let g)? = o["generation"], g >= 0, let k = o["key"]?.stringValue,
                  let key = Base64.decode(k), key.count == 32 else { return nil }
            return AdvertisementKey(generation: UInt64(g), key: key)
        }
    }

    func save(_ keys: [AdvertisementKey]) {
        let doc: JSONValue = .object(["version": .integer(1), "keys": .array(keys.map {
            .object(["generation": .integer(Int64(clamping: $0.generation)), "key": .string(Base64.encode($0.key))])
        })])
        StateWriter.shared.write(doc.serializedBytes(pretty: true) + [UInt8(ascii: "\n")], to: path, mode: 0o600)
    }
}

/// What the advertisement says, worked out without I/O: a random instance name and, in
/// TXT `t`, a random nonce and a tag only holders of the key can make or check:
/// HMAC-SHA256(key, "handoff-adv-v1" ‖ epoch ‖ nonce), first 8 bytes. An epoch is 15
/// minutes; a tag of the epoch before or after also counts (clocks differ).
public enum PrivateAdvertisement {
    public static let epochSeconds: Int64 = 900

    static func epoch(at now: Timestamp, length: Int64 = epochSeconds) -> Int64 { now.seconds / max(1, length) }

    static func randomHex(_ bytes: Int) -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &g) }.hexString
    }

    static func tag(key: [UInt8], epoch: Int64, nonce: [UInt8]) -> [UInt8] {
        var data = Array("handoff-adv-v1".utf8)
        data += withUnsafeBytes(of: epoch.bigEndian, Array.init)
        data += nonce
        return Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)).prefix(8))
    }

    /// TXT `t`: 8 bytes of nonce and 8 of tag, in hex.
    static func txt(key: [UInt8], epoch: Int64, nonce: [UInt8]) -> String {
        (nonce + tag(key: key, epoch: epoch, nonce: nonce)).hexString
    }

    /// Whether `t` was made with one of `keys` in an epoch next to `epoch`.
    static func verifies(_ t: String, keys: [[UInt8]], epoch: Int64) -> Bool {
        guard t.utf8.count == 32, let bytes = [UInt8](lowercaseHex: t) else { return false }
        let nonce = Array(bytes.prefix(8)), tag = Array(bytes.suffix(8))
        for key in keys {
            for e in (epoch - 1)...(epoch + 1) where Self.tag(key: key, epoch: e, nonce: nonce) == tag { return true }
        }
        return false
    }
}
