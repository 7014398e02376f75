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

    /// Security.md limit 2: a member cannot push the generation out of reach of the
    /// renewal made when it is removed.
    @Test func aJumpOfMoreThanTheStepIsNotTaken() {
        let k = AdvertisementKey(generation: 5, key: Array(repeating: 1, count: 32))
        let far = AdvertisementKey(generation: 5 + AdvertisementKey.maximumStep + 1, key: Array(repeating: 255, count: 32))
        let top = AdvertisementKey(generation: UInt64(Int64.max), key: Array(repeating: 255, count: 32))
        let near = AdvertisementKey(generation: 5 + AdvertisementKey.maximumStep, key: Array(repeating: 0, count: 32))
        #expect(!k.isSupersededBy(far) && !k.isSupersededBy(top))
        #expect(k.isSupersededBy(near))
        // Held at the greatest, a device still takes the renewal one generation up.
        #expect(near.isSupersededBy(AdvertisementKey(generation: near.generation + 1, key: Array(repeating: 0, count: 32))))
    }
}

/// One workstation's advertisement across rotations, with the time given.
@Suite("Advertisement rotation")
struct AdvertisementRotationTests {
    let key = AdvertisementKey.random(generation: 1), other = AdvertisementKey.random(generation: 2)

    @Test func eachRotationIsNewAndTheNextIsDueOnThePeriodsMultiple() {
        var r = AdvertisementRotation(keys: [key], periodSeconds: 900)
        let wait = r.rotate(at: Timestamp(seconds: 9_000 + 100))
        #expect(wait == 800, "members rotate together, on multiples of the period")
        let before = (r.name, r.host, r.hint, r.txt(pairing: nil).first { $0.0 == "t" }!.1)
        #expect(r.rotate(at: Timestamp(seconds: 9_900)) == 900)
        let after = (r.name, r.host, r.hint, r.txt(pairing: nil).first { $0.0 == "t" }!.1)
        #expect(before.0 != after.0 && before.1 != after.1 && before.2 != after.2 && before.3 != after.3, "nothing carries over")
        #expect(r.rotate(at: Timestamp(seconds: 10_799)) == 1, "never less than a second")
        var short = AdvertisementRotation(keys: [key], periodSeconds: 1)
        #expect(short.rotate(at: Timestamp(seconds: 5)) == 5, "a period under 10 s is taken as 10 s")
    }

    @Test func membersRecogniseItAndOnlyTheHintChangesWithTheOffer() {
        var r = AdvertisementRotation(keys: [key], periodSeconds: 900)
        let now = Timestamp(seconds: 1_800_000_000)
        _ = r.rotate(at: now)
        let t = r.txt(pairing: nil).first { $0.0 == "t" }?.1
        #expect(r.isMember(advertising: t, at: now))
        #expect(!AdvertisementRotation(keys: [other], periodSeconds: 900).isMember(advertising: t, at: now), "another account")
        #expect(AdvertisementRotation(keys: [other, key], periodSeconds: 900).isMember(advertising: t, at: now), "the previous key counts")
        #expect(!r.isMember(advertising: nil, at: now))
        let (name, hint) = (r.name, r.hint)
        r.changed()
        #expect(r.name == name && r.hint != hint && r.txt(pairing: nil).first { $0.0 == "t" }?.1 == t)
    }

    @Test func onlyAPairingWindowNamesTheDevice() {
        var r = AdvertisementRotation(keys: [key], periodSeconds: 900)
        _ = r.rotate(at: Timestamp(seconds: 0))
        #expect(r.txt(pairing: nil).map(\.0) == ["v", "h", "t"])
        let pairing = r.txt(pairing: (tag: "abc", deviceName: String(repeating: "é", count: 100)))
        #expect(pairing.map(\.0) == ["v", "h", "t", "pair", "n"])
        #expect(pairing.last!.1.utf8.count <= 64, "the name is cut to fit")
        #expect(r.instance(advertised: nil) == r.name)
        #expect(r.instance(advertised: r.name + " (2)") == r.name + " (2)", "Avahi's rename after a collision")
        #expect(r.instance(advertised: "stale") == r.name, "an earlier rotation's name")
    }
}
