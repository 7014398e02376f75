import HandoffCore
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOEmbedded
import Testing

// MARK: - Exact bytes

@Suite("PeerWire exact bytes")
struct PeerWireExactBytesTests {
    @Test func subscribeBytes() {
        #expect(PeerMessageCoding.encode(.subscribe) == [0x02, 0x0A, 0x00])
    }

    @Test func offerNilBytes() {
        #expect(PeerMessageCoding.encode(.offer(nil)) == [0x03, 0x0A, 0x00])
    }

    @Test func helloBytes() {
        let bytes = PeerMessageCoding.encode(.hello(PeerHello(version: 0x0203, minimumVersion: 0x0102, deviceName: "a")))
        #expect(Array(bytes.prefix(9)) == [0x01, 0x48, 0x4E, 0x44, 0x46, 0x02, 0x03, 0x01, 0x02])
        #expect(bytes == [0x01, 0x48, 0x4E, 0x44, 0x46, 0x02, 0x03, 0x01, 0x02]
            + [0x0A, 0x01, 0x0A] + Array("deviceName".utf8) + [0x05, 0x01, 0x61])
        let current = PeerMessageCoding.encode(.hello(PeerHello(deviceName: "x")))
        // Version 4 (forgetting history, PeerProtocol.md §20), still speaking versions 1 to 3.
        #expect(Array(current.prefix(9)) == [0x01] + helloMagic + [0x00, 0x04, 0x00, 0x01])
        #expect(PeerHello.currentVersion == 4)
        #expect(PeerHello.minimumVersion == 1)
        // `instance` sorts between deviceName and listenPort (7443, a zigzag varint); seed-16 of
        // the fuzz corpus is these bytes with a time.
        let withInstance = PeerMessageCoding.encode(.hello(PeerHello(version: 1, deviceName: "desk", listenPort: 7443, instance: "3f9c2b0e5a6d")))
        #expect(withInstance == [0x01] + helloMagic + [0x00, 0x01, 0x00, 0x01] + [0x0A, 0x03]
            + [0x0A] + Array("deviceName".utf8) + [0x05, 0x04] + Array("desk".utf8)
            + [0x08] + Array("instance".utf8) + [0x05, 0x0C] + Array("3f9c2b0e5a6d".utf8)
            + [0x0A] + Array("listenPort".utf8) + [0x03, 0xA6, 0x74])
    }

    @Test func fetchBytes() {
        let id = Array(idA.rawValue.utf8)
        let head: [UInt8] = [0x04, 0x0A, 0x02, 0x0A] + Array("activityID".utf8) + [0x05, 0x20] + id + [0x09] + Array("requestID".utf8)
        #expect(PeerMessageCoding.encode(.fetch(requestID: 0, activityID: idA)) == head + [0x03, 0x00])
        #expect(PeerMessageCoding.encode(.fetch(requestID: 1, activityID: idA)) == head + [0x03, 0x02])
        // UInt64.max travels as the integer -1 (bit pattern), zigzag 1.
        #expect(PeerMessageCoding.encode(.fetch(requestID: UInt64.max, activityID: idA)) == head + [0x03, 0x01])
    }

    @Test func continuedAndErrorBytes() {
        #expect(PeerMessageCoding.encode(.continued(activityID: idB))
            == [0x06, 0x0A, 0x01, 0x0A] + Array("activityID".utf8) + [0x05, 0x20] + Array(repeating: UInt8(ascii: "f"), count: 32))
        #expect(PeerMessageCoding.encode(.error(code: "x", message: "y"))
            == [0x07, 0x0A, 0x02, 0x04] + Array("code".utf8) + [0x05, 0x01, 0x78] + [0x07] + Array("message".utf8) + [0x05, 0x01, 0x79])
    }

    @Test func fetchedFailureBytes() {
        #expect(PeerMessageCoding.encode(.fetched(requestID: 2, .failure(code: "c", message: "m")))
            == [0x05, 0x0A, 0x03]
            + [0x09] + Array("errorCode".utf8) + [0x05, 0x01, 0x63]
            + [0x0C] + Array("errorMessage".utf8) + [0x05, 0x01, 0x6D]
            + [0x09] + Array("requestID".utf8) + [0x03, 0x04])
    }

    @Test func frameBytes() {
        #expect(framed(.subscribe) == [0x00, 0x00, 0x00, 0x03, 0x02, 0x0A, 0x00])
    }
}
