import HandoffCore
import Testing

@Suite("Base64")
struct Base64Tests {
    // RFC 4648 §10.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    @Test func rfc4648Vectors() {
        for (plain, encoded) in Self.vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test func fullAlphabet() {
        // The 48 bytes whose encoding walks the whole alphabet once, including + and /.
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        let bytes = Base64.decode(alphabet)
        #expect(bytes?.count == 48)
        #expect(bytes.map(Base64.encode) == alphabet)
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
        #expect(Base64.encode([0xFF, 0xFF, 0xFF]) == "////")
        #expect(Base64.encode([0, 0, 0]) == "AAAA")
    }

    @Test func everyLengthRoundTrips() {
        var g = XorShift64(seed: 64)
        for n in 0..<200 {
            let bytes = g.bytes(n)
            let text = Base64.encode(bytes)
            #expect(text.utf8.count == (n + 2) / 3 * 4)
            #expect(Base64.decode(text) == bytes)
        }
    }

    @Test func everyByteRoundTrips() {
        for b in 0...255 {
            let bytes = [UInt8(b)]
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
            #expect(Base64.decode(Base64.encode(bytes + bytes)) == bytes + bytes)
        }
    }

    @Test(arguments: [
        "Zg", "Zg=", "Zm8", "Zm9vY", "Z", "=", "==", "===", "====", "Zg===", "=Zg=", "Z===", "Zm9=v", "Zg==Zg==", "Zm8=Zm8=",
        "Zg=a", "Z=g=", "Zm9v\n", "Zm9v ", " Zm9v", "Zm 9", "Zm9v\r\n", "Zm-v", "Zm_v", "Zm9v!", "Zm9é", "Zm9v====",
        "\u{0}AAA", "AAA\u{80}",
    ])
    func malformedTextIsRejected(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test func nonCanonicalPaddingBitsAreRejected() {
        // "Zh==" and "Zm9=" carry non-zero bits in the part that padding discards: the
        // canonical encodings of the same bytes are "Zg==" and "Zm8=".
        #expect(Base64.decode("Zh==") == nil)
        #expect(Base64.decode("Zm9=") == nil)
        #expect(Base64.decode("AB==") == nil)
        #expect(Base64.decode("AAB=") == nil)
    }

    @Test func decodedTextReencodesIdentically() {
        // Whatever decode accepts must be the canonical text of its bytes, so one byte
        // string has exactly one spelling in $data.
        var g = XorShift64(seed: 4648)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var nonCanonical: [String] = []
        for _ in 0..<2000 {
            var chars = (0..<(4 * (1 + g.below(3)))).map { _ in alphabet[g.below(64)] }
            let pad = g.below(3)
            for i in 0..<pad { chars[chars.count - 1 - i] = UInt8(ascii: "=") }
            let text = String(decoding: chars, as: UTF8.self)
            if let bytes = Base64.decode(text), Base64.encode(bytes) != text { nonCanonical.append(text) }
        }
        let acceptedNonCanonical = nonCanonical.count
        #expect(acceptedNonCanonical == 0, "e.g. \(nonCanonical.prefix(5))")
    }

    @Test func lowercaseHexRoundTripsAndRefusesAnythingElse() {
        let bytes: [UInt8] = [0, 1, 0x7f, 0x80, 0xab, 0xff]
        #expect(bytes.hexString == "00017f80abff")
        #expect([UInt8](lowercaseHex: bytes.hexString) == bytes)
        #expect([UInt8](lowercaseHex: "") == [])
        for bad in ["0", "0g", "AB", "0 1", "ab\u{e9}"] { #expect([UInt8](lowercaseHex: bad) == nil, "\(bad)") }
    }
}
