import HandoffCore
import HandoffPeerProtocol
import HandoffStreamFrames
import Testing

/// The clipboard's messages (PeerProtocol.md §19): round trips, and a peer's offer taken
/// leniently format by format but strictly as a whole.
@Suite("Clipboard on the wire")
struct ClipboardWireTests {
    let id = ClipboardID("00112233445566778899aabbccddeeff")!

    func offer(_ formats: [ClipboardFormat]) -> ClipboardOffer {
        ClipboardOffer(id: id, formats: formats, ageMilliseconds: 1500, remainingMilliseconds: 598_500)
    }

    func encoded(_ formats: [PropertyValue], id: String = "00112233445566778899aabbccddeeff", age: Int64 = 0, remaining: Int64 = 1000) -> [UInt8] {
        [0x16] + PropertyBinaryEncoding.encode(.dictionary(["clipboard": .dictionary([
            "id": .string(id), "formats": .array(formats), "age": .integer(age), "remaining": .integer(remaining),
        ])]))
    }

    func format(_ type: String, _ size: Int64) -> PropertyValue { .dictionary(["type": .string(type), "size": .integer(size)]) }

    @Test func messagesRoundTrip() throws {
        for m: PeerMessage in [
            .clipboard(nil),
            .clipboard(offer([ClipboardFormat(type: "text/plain;charset=utf-8", size: 12), ClipboardFormat(type: "image/png", size: 1 << 30),
                              ClipboardFormat(type: "text/uri-list", size: nil)])),
            .clipboardOpen(id: id, type: "text/uri-list"),
        ] {
            let bytes = PeerMessageCoding.encode(m)
            #expect(try PeerMessageCoding.decode(bytes) == m)
            #expect(PeerMessageCoding.encode(try PeerMessageCoding.decode(bytes)) == bytes)
        }
        #expect(PeerMessage.clipboard(nil).typeCode == 0x16)
        #expect(PeerMessage.clipboardOpen(id: id, type: "a/b").typeCode == 0x17)
    }

    @Test func thousandsOfFormatsAreCappedNotFatal() throws {
        let many = (0..<4000).map { format("application/x-n\($0)", 10) }
        guard case .clipboard(let o?) = try PeerMessageCoding.decode(encoded(many)) else { Issue.record("no offer"); return }
        #expect(o.formats.count == ClipboardOffer.maximumFormats)
        #expect(o.droppedFormats == 4000 - ClipboardOffer.maximumFormats)
        #expect(o.formats.first?.type == "application/x-n0")
        // Beyond what any sender means, the message itself is malformed.
        #expect(throws: PeerProtocolError.self) { try PeerMessageCoding.decode(encoded((0..<5000).map { format("a/n\($0)", 1) })) }
    }

    @Test func malformedFormatsAreLeftOutOneByOne() throws {
        let list: [PropertyValue] = [
            format("text/plain", 3), format("UTF8_STRING", 3), format("text/plain", 9), format("bad type/x", 1),
            format("image/png", -1), .string("nonsense"), format(String(repeating: "a", count: 300) + "/b", 1),
            format("x-kde-passwordManagerHint", 6), format("text/html;charset=utf-8", 20), .dictionary(["type": .string("image/png")]),
            .dictionary(["type": .string("image/jpeg"), "size": .string("12")]),
        ]
        guard case .clipboard(let o?) = try PeerMessageCoding.decode(encoded(list)) else { Issue.record("no offer"); return }
        #expect(o.formats == [ClipboardFormat(type: "text/plain", size: 3), ClipboardFormat(type: "text/html;charset=utf-8", size: 20),
                              ClipboardFormat(type: "image/png", size: nil)])
        #expect(o.droppedFormats == 8)
    }

    @Test func anOfferWithoutAUsableFormatOrWithBadFieldsIsMalformed() {
        #expect(throws: PeerProtocolError.self) { try PeerMessageCoding.decode(encoded([format("nope", 1)])) }
        #expect(throws: PeerProtocolError.self) { try PeerMessageCoding.decode(encoded([format("a/b", 1)], id: "xyz")) }
        #expect(throws: PeerProtocolError.self) { try PeerMessageCoding.decode(encoded([format("a/b", 1)], age: -1)) }
        #expect(throws: PeerProtocolError.self) { try PeerMessageCoding.decode(encoded([format("a/b", 1)], remaining: -5)) }
        let badOpen = [0x17] + PropertyBinaryEncoding.encode(.dictionary(["id": .string(id.rawValue), "type": .string("text/plain\n")]))
        #expect(throws: PeerProtocolError.self) { try PeerMessageCoding.decode(badOpen) }
    }

    @Test(arguments: [
        ("text/plain", true), ("text/plain;charset=utf-8", true), ("image/png", true), ("text/uri-list", true),
        ("application/vnd.oasis.opendocument.text", true), ("x-special/gnome-copied-files", true),
        ("", false), ("text", false), ("/plain", false), ("text/", false), ("a/b/c", false), ("text/plain; charset=utf-8", false),
        ("text/plain;charset", false), ("text/plain;=x", false), ("UTF8_STRING", false), ("TARGETS", false),
        ("text/pla\u{0}in", false), ("text/plaín", false), ("-text/plain", false),
    ])
    func mimeTypes(_ text: String, _ valid: Bool) {
        #expect(ClipboardFormat.isValidType(text) == valid)
    }

    @Test func ownFormatsAreCheckedStrictly() {
        #expect(throws: ValidationError.self) { try ClipboardOffer.validate([]) }
        #expect(throws: ValidationError.self) { try ClipboardOffer.validate([ClipboardFormat(type: "a/b", size: 1), ClipboardFormat(type: "a/b", size: 2)]) }
        #expect(throws: ValidationError.self) { try ClipboardOffer.validate([ClipboardFormat(type: "a/b", size: -1)]) }
        #expect(throws: ValidationError.self) { try ClipboardOffer.validate((0...32).map { ClipboardFormat(type: "a/n\($0)", size: 1) }) }
        #expect(throws: Never.self) { try ClipboardOffer.validate([ClipboardFormat(type: "text/plain", size: 0)]) }
    }
}
