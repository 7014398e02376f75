@testable import HandoffDaemon
import HandoffCore
import Testing

/// The private advertisement's pieces, without Avahi: the tag only key holders can make
/// or check, epochs next to each other, and which shared key wins.
@Suite("Private advertisement")
struct PrivateAdvertisementTests {
    let key = AdvertisementKey.random(generation: 1).key, other = AdvertisementKey.random(generation: 1).key
    let nonce: [UInt8] = Array(0..<8)

    @Test func membersRecogniseTagsOfNearbyEpochsAndStrangersDoNot() {
        let t = PrivateAdvertisement.txt(key: key, epoch: 1000, nonce: nonce)
        #expect(t.count == 32)
        #expect(PrivateAdvertisement.verifies(t, keys: [key], epoch: 1000))
        #expect(PrivateAdvertisement.verifies(t, keys: [key], epoch: 1001) && PrivateAdvertisement.verifies(t, keys: [key], epoch: 999))
        #expect(!PrivateAdvertisement.verifies(t, keys: [key], epoch: 1002), "two epochs away: stale")
        #expect(!PrivateAdvertisement.verifies(t, keys: [other], epoch: 1000), "another account's key")
        #expect(PrivateAdvertisement.verifies(t, keys: [other, key], epoch: 1000), "the previous key still counts")
        for bad in ["", "zz", String(repeating: "0", count: 32), String(t.dropLast()) + (t.last == "0" ? "1" : "0"), t.uppercased()] {
            #expect(!PrivateAdvertisement.verifies(bad, keys: [key], epoch: 1000), "\(bad)")
        }
    }

    @Test func twoRotationsShareNothingAStrangerCanSee() {
        let a = PrivateAdvertisement.txt(key: key, epoch: 5, nonce: Array(AdvertisementKey.random(generation: 0).key.prefix(8)))
        let b = PrivateAdvertisement.txt(key: key, epoch: 6, nonce: Array(AdvertisementKey.random(generation: 0).key.prefix(8)))
        #expect(a != b && a.prefix(16) != b.prefix(16) && a.suffix(16) != b.suffix(16))
        #expect(PrivateAdvertisement.randomHex(6).count == 12)
        #expect(PrivateAdvertisement.epoch(at: Timestamp(seconds: 1799)) == 1 && PrivateAdvertisement.epoch(at: Timestamp(seconds: 1800)) == 2)
    }

    @Test func theGreatestKeyWins() {
        let k1 = AdvertisementKey(generation: 1, key: Array(repeating: 9, count: 32))
        let k2 = AdvertisementKey(generation: 2, key: Array(repeating: 1, count: 32))
        let k1b = AdvertisementKey(generation: 1, key: Array(repeating: 10, count: 32))
        #expect(k1.isSupersededBy(k2) && !k2.isSupersededBy(k1))
        #expect(k1.isSupersededBy(k1b) && !k1b.isSupersededBy(k1))
        #expect(!k1.isSupersededBy(k1))
    }
}
