import HandoffCore
import HandoffPeerProtocol
import HandoffStreamFrames
import Testing

/// `forgetHistory` (0x18, version 4, PeerProtocol.md §20): by persistent identifier or
/// all; anything else is malformed.
struct ForgetHistoryWireTests {
    func encoded(_ d: [String: PropertyValue]) -> [UInt8] { [0x18] + PropertyBinaryEncoding.encode(.dictionary(d)) }

    @Test func messagesRoundTrip() throws {
        for m: PeerMessage in [.forgetHistory(persistentIdentifiers: ["note/42", "ünï"]), .forgetHistory(persistentIdentifiers: nil)] {
            let bytes = PeerMessageCoding.encode(m)
            #expect(bytes.first == 0x18)
            #expect(try PeerMessageCoding.decode(bytes) == m)
        }
        #expect(try PeerMessageCoding.decode(encoded(["all": .boolean(true)])) == .forgetHistory(persistentIdentifiers: nil))
    }

    @Test(arguments: [
        [:],
        ["all": .boolean(false)],
        ["all": .boolean(true), "persistentIdentifiers": .array([.string("a")])],
        ["persistentIdentifiers": .array([])],
        ["persistentIdentifiers": .array([.string("")])],
        ["persistentIdentifiers": .array([.string("a\u{0}b")])],
        ["persistentIdentifiers": .array([.integer(1)])],
        ["persistentIdentifiers": .array([.string(String(repeating: "x", count: 257))])],
        ["persistentIdentifiers": .array(Array(repeating: .string("a"), count: 1025))],
    ] as [[String: PropertyValue]])
    func badOnesAreMalformed(_ body: [String: PropertyValue]) {
        #expect(throws: PeerProtocolError.self) { try PeerMessageCoding.decode(encoded(body)) }
    }
}
