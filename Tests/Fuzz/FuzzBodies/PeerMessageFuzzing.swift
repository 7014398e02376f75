import HandoffCore
#if canImport(Glibc)
import Glibc
#endif
import HandoffPeerProtocol

/// A peer frame's body (type byte and body): every message of the peer protocol, the
/// hello included. What decodes must encode back to a frame that decodes the same.
public enum PeerMessageFuzzing {
    /// One input: a broken invariant is reported through `fuzzCheck` (a crash under libFuzzer).
    public static func test(_ bytes: [UInt8]) {
        guard let message = try? PeerMessageCoding.decode(bytes) else { return }
        // Compared as bytes (a NaN in userInfo is never equal to itself).
        let encoded = PeerMessageCoding.encode(message)
        let again = try? PeerMessageCoding.decode(encoded)
        fuzzCheck(again.map(PeerMessageCoding.encode) == encoded, "a peer message does not survive its encoding")
    }

    /// Valid inputs made by the real encoders: the seed corpus (`TARGET --write-seeds DIR`).
    public static func seeds() -> [[UInt8]] {
        let a = FuzzSeeds.activity()
        let messages: [PeerMessage] = [.hello(PeerHello(deviceName: "desk", purpose: .link, listenPort: 7443, time: Timestamp(seconds: 1_800_000_000))),
            .subscribe, .offer(ActivitySummary(a, payloadSize: 100)), .offer(nil), .fetch(requestID: 1, activityID: a.id),
            .fetched(requestID: 1, .activity(a, stale: false)), .fetched(requestID: 2, .failure(code: "busy", message: "m")),
            .continued(activityID: a.id), .error(code: "x", message: "y"), .streamOpen(activityID: a.id, document: true),
            .streamAccepted(length: 42), .pairCommit([UInt8](repeating: 1, count: 32)), .pairNonce([UInt8](repeating: 2, count: 32)), .pairConfirm,
            .account([[1, 2, 3]]), .advertisementKey(generation: 2, key: [UInt8](repeating: 3, count: 32)),
            .keptIndex([.init(origin: [UInt8](repeating: 4, count: 32), sequence: 1_800_000_000_000_000)]), .kept([[1, 2, 3]]),
            .clipboard(ClipboardOffer(id: ClipboardID("00112233445566778899aabbccddeeff")!, formats: [
                ClipboardFormat(type: "text/plain;charset=utf-8", size: 12), ClipboardFormat(type: "image/png", size: nil)],
                ageMilliseconds: 1500, remainingMilliseconds: 598_500)),
            .clipboard(nil), .clipboardOpen(id: ClipboardID("00112233445566778899aabbccddeeff")!, type: "text/uri-list"),
            .forgetHistory(persistentIdentifiers: ["note/42"]), .forgetHistory(persistentIdentifiers: nil)]
        return messages.map(PeerMessageCoding.encode)
    }
}
