import HandoffCore
import HandoffStreamFrames
import HandoffPeerProtocol
import NIOCore
import NIOEmbedded
import Testing

// MARK: - Hostile input

@Suite("PeerWire hostile input")
struct PeerWireHostileInputTests {
    @Test func emptyFrame() {
        expectRejected([])
    }

    @Test(arguments: [UInt8(0x00), 0x0A, 0x0F, 0x13, 0x14, 0x7F, 0x80, 0xFF])
    func unknownType(type: UInt8) {
        expectRejected(raw(type, .dictionary([:])))
        expectRejected([type])
    }

    @Test func helloWithoutOrWithWrongMagic() {
        let tail: [UInt8] = [0x00, 0x01, 0x00, 0x01] + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .string("x")]))
        // Sanity: the correct form is accepted.
        _ = expectAccepted([0x01] + helloMagic + tail)
        expectRejected([0x01], code: "not-handoff")
        for n in 0..<8 {
            expectRejected([0x01] + Array((helloMagic + [0x00, 0x01, 0x00, 0x01]).prefix(n)), code: "not-handoff", "\(n) bytes after the type")
        }
        expectRejected([0x01] + Array("HNDG".utf8) + tail, code: "not-handoff")
        expectRejected([0x01] + Array("hndf".utf8) + tail, code: "not-handoff")
        expectRejected([0x01] + Array("FDNH".utf8) + tail, code: "not-handoff")
        expectRejected([0x01] + [0x00, 0x00, 0x00, 0x00] + tail, code: "not-handoff")
        // A hello-shaped body without the magic: the dictionary straight after the type.
        expectRejected(raw(0x01, .dictionary(["deviceName": .string("x")])), code: "not-handoff")
        // Something else entirely (e.g. an HTTP request on the peer port).
        expectRejected([0x01] + Array("GET / HTTP/1.1\r\n\r\n".utf8), code: "not-handoff")
        do {
            _ = try PeerMessageCoding.decode([0x01])
        } catch {
            #expect(error == PeerProtocolError.notHandoff)
        }
    }

    @Test func helloBody() {
        let head: [UInt8] = [0x01] + helloMagic + [0x00, 0x01, 0x00, 0x01]
        expectRejected(head, "no body at all")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary([:])), "no deviceName")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary(["name": .string("x")])), "deviceName misspelt")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .integer(1)])), "deviceName an integer")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .url("x")])), "deviceName a URL")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .null])), "deviceName null")
        expectRejected(head + PropertyBinaryEncoding.encode(.array([.string("x")])), "body an array")
        expectRejected(head + PropertyBinaryEncoding.encode(.string("x")), "body a string")
        expectRejected(head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .string("x")])) + [0x00], "trailing byte")
    }

    @Test func helloInstanceIsOneDNSLabelOrAbsent() {
        let head: [UInt8] = [0x01] + helloMagic + [0x00, 0x01, 0x00, 0x01]
        func hello(_ instance: PropertyValue) -> [UInt8] {
            head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .string("x"), "instance": instance]))
        }
        guard case .hello(let h)? = expectAccepted(hello(.string(String(repeating: "a", count: 63)))) else {
            Issue.record("63 bytes: not a hello")
            return
        }
        #expect(h.instance?.utf8.count == 63)
        expectRejected(hello(.string(String(repeating: "a", count: 64))), code: "malformed", "64 bytes: longer than a DNS label")
        expectRejected(hello(.string(String(repeating: "é", count: 32))), code: "malformed", "64 bytes in 32 characters")
        expectRejected(hello(.string("")), code: "malformed", "empty")
        expectRejected(hello(.integer(7)), code: "malformed", "an integer")
        expectRejected(hello(.null), code: "malformed", "null")
        guard case .hello(let without)? = expectAccepted(head + PropertyBinaryEncoding.encode(.dictionary(["deviceName": .string("x")]))) else {
            Issue.record("without an instance: not a hello")
            return
        }
        #expect(without.instance == nil, "older peers send none")
    }

    @Test(arguments: [UInt8(0x02), 0x03, 0x04, 0x05, 0x06, 0x07])
    func bodiesThatAreNotDictionaries(type: UInt8) {
        expectRejected([type], "no body")
        for body: PropertyValue in [.array([]), .set([]), .string("x"), .null, .integer(0), .boolean(true), .data([0x0A, 0x00]), .url("x"), .array([.dictionary([:])])] {
            expectRejected(raw(type, body), "body \(body)")
        }
        expectRejected(raw(type, .dictionary([:])) + [0x00], "trailing bytes after the body")
        expectRejected([type, 0x0A, 0x01], "dictionary truncated")
        expectRejected([type, 0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "huge count")
        expectRejected([type, 0x0A, 0x02, 0x01, 0x61, 0x00, 0x01, 0x61, 0x00], "duplicate key")
        expectRejected([type, 0x0A, 0x01, 0x01, 0xFF, 0x00], "key not UTF-8")
        expectRejected([type, 0x0C], "unknown value tag")
    }

    @Test func badFetch() {
        let good: [String: PropertyValue] = ["requestID": .integer(1), "activityID": .string(idA.rawValue)]
        _ = expectAccepted(raw(0x04, .dictionary(good)))
        for badID: PropertyValue in [
            .string(""), .string("xyz"), .string(String(idA.rawValue.dropLast())), .string(idA.rawValue + "0"),
            .string("g123456789abcdef0123456789abcdef"), .string("0123456789abcdef-0123456789abcde"),
            .string(" 123456789abcdef0123456789abcdef"), .string("０123456789abcdef0123456789abcde"),
            .url(idA.rawValue), .data(Array(idA.rawValue.utf8)), .integer(1), .null,
        ] {
            var d = good
            d["activityID"] = badID
            expectRejected(raw(0x04, .dictionary(d)), "activityID \(badID)")
            expectRejected(raw(0x06, .dictionary(["activityID": badID])), "continued activityID \(badID)")
        }
        for badRequest: PropertyValue in [.string("1"), .double(1), .boolean(true), .null, .date(Timestamp(seconds: 1))] {
            var d = good
            d["requestID"] = badRequest
            expectRejected(raw(0x04, .dictionary(d)), "requestID \(badRequest)")
        }
        expectRejected(raw(0x04, .dictionary(["requestID": .integer(1)])), "no activityID")
        expectRejected(raw(0x04, .dictionary(["activityID": .string(idA.rawValue)])), "no requestID")
        expectRejected(raw(0x06, .dictionary([:])), "continued without an id")
    }

    @Test func badError() {
        expectRejected(raw(0x07, .dictionary(["code": .string("c")])))
        expectRejected(raw(0x07, .dictionary(["message": .string("m")])))
        expectRejected(raw(0x07, .dictionary(["code": .integer(1), "message": .string("m")])))
        expectRejected(raw(0x07, .dictionary(["code": .string("c"), "message": .data([])])))
    }

    @Test func fetchedFailureMissingFields() {
        expectRejected(raw(0x05, .dictionary([:])))
        expectRejected(raw(0x05, .dictionary(["requestID": .integer(1)])), "neither activity nor error")
        expectRejected(raw(0x05, .dictionary(["requestID": .integer(1), "errorCode": .string("c")])))
        expectRejected(raw(0x05, .dictionary(["requestID": .integer(1), "errorMessage": .string("m")])))
        expectRejected(raw(0x05, .dictionary(["requestID": .integer(1), "errorCode": .null, "errorMessage": .string("m")])))
        expectRejected(raw(0x05, .dictionary(["errorCode": .string("c"), "errorMessage": .string("m")])), "no requestID")
    }

    @Test func fetchedActivityWithAFieldMissing() {
        _ = expectAccepted(raw(0x05, .dictionary(fetchedBody())))
        let optional: Set<String> = ["webpageURL", "expirationDate", "originID", "referrerURL", "persistentIdentifier", "targetContentIdentifier",
                                     "eligibleForPrediction", "contentDescription", "displayName", "thumbnail"]
        let full = activityDictionary()
        #expect(Set(full.keys).isSuperset(of: optional))
        for key in full.keys.sorted() {
            var a = full
            a[key] = nil
            var body = fetchedBody()
            body["activity"] = .dictionary(a)
            if optional.contains(key) {
                let m = expectAccepted(raw(0x05, .dictionary(body)), "without optional \(key)")
                if case .fetched(_, .activity(let got, _))? = m {
                    switch key {
                    case "webpageURL": #expect(got.webpageURL == nil)
                    case "expirationDate": #expect(got.expirationDate == nil)
                    case "originID": #expect(got.origin.id == nil)
                    default:
                        // The newer fields: absent from what an older peer sends, and left unset.
                        if case .dictionary(let d) = ActivityPropertyList.encode(got) { #expect(d[key] == nil, "\(key)") }
                    }
                } else {
                    Issue.record("without \(key): \(String(describing: m))")
                }
            } else {
                expectRejected(raw(0x05, .dictionary(body)), "without \(key)")
            }
        }
        for key in ["requestID", "stale"] {
            var body = fetchedBody()
            body[key] = nil
            expectRejected(raw(0x05, .dictionary(body)), "without \(key)")
        }
    }

    @Test func fetchedActivityWithInvalidValues() {
        let cases: [(String, PropertyValue)] = [
            ("id", .string("not-an-id")), ("id", .integer(1)),
            ("activityType", .integer(1)), ("activityType", .null),
            ("title", .data([])),
            ("userInfo", .array([])), ("userInfo", .string("{}")),
            ("requiredUserInfoKeys", .string("a")), ("requiredUserInfoKeys", .array([.integer(1)])), ("requiredUserInfoKeys", .set([.string("a")])),
            ("keywords", .array([.string("ok"), .null])), ("keywords", .dictionary([:])),
            ("webpageURL", .string("https://example.com")), ("webpageURL", .null),
            ("expirationDate", .integer(0)), ("expirationDate", .string("2026-01-01T00:00:00Z")), ("expirationDate", .null),
            ("createdAt", .double(0)), ("updatedAt", .null),
            ("originName", .null), ("originID", .integer(7)), ("originID", .null),
            ("eligibleForHandoff", .integer(1)), ("eligibleForSearch", .string("true")),
            ("eligibleForPublicIndexing", .null), ("supportsContinuationStreams", .integer(0)), ("needsSave", .data([1])),
        ]
        for (key, value) in cases {
            var a = activityDictionary()
            a[key] = value
            var body = fetchedBody()
            body["activity"] = .dictionary(a)
            expectRejected(raw(0x05, .dictionary(body)), "\(key) = \(value)")
        }
        for activity: PropertyValue in [.null, .array([]), .string("x"), .dictionary([:])] {
            var body = fetchedBody()
            body["activity"] = activity
            expectRejected(raw(0x05, .dictionary(body)), "activity = \(activity)")
        }
        for stale: PropertyValue in [.integer(1), .string("true"), .null] {
            var body = fetchedBody()
            body["stale"] = stale
            expectRejected(raw(0x05, .dictionary(body)), "stale = \(stale)")
        }
        var body = fetchedBody()
        body["requestID"] = .string("9")
        expectRejected(raw(0x05, .dictionary(body)), "requestID a string")
    }

    @Test func offerWithABadSummary() {
        _ = expectAccepted(raw(0x03, .dictionary(["activity": fullSummary().propertyList])))
        let optional: Set<String> = ["webpageURL", "expirationDate", "search"]
        let full = summaryDictionary()
        #expect(Set(full.keys).isSuperset(of: optional))
        for key in full.keys.sorted() {
            var s = full
            s[key] = nil
            let bytes = raw(0x03, .dictionary(["activity": .dictionary(s)]))
            if optional.contains(key) {
                _ = expectAccepted(bytes, "without optional \(key)")
            } else {
                expectRejected(bytes, "without \(key)")
            }
        }
        let cases: [(String, PropertyValue)] = [
            ("activityType", .string("")), ("activityType", .string("noDots")), ("activityType", .string("com..example")),
            ("activityType", .string("com.example.")), ("activityType", .string("com.exa mple")), ("activityType", .string("com.exämple")),
            ("activityType", .string("com.example/edit")), ("activityType", .string(String(repeating: "a.", count: 400) + "a")),
            ("activityType", .integer(1)),
            ("id", .string("nope")), ("id", .string(idA.rawValue + "00")),
            ("webpageURL", .url("ftp://example.com")), ("webpageURL", .url("javascript:alert(1)")), ("webpageURL", .url("https://")),
            ("webpageURL", .url("https://exa mple.com")), ("webpageURL", .url("https://example.com/\u{0}")),
            ("webpageURL", .string("https://example.com")),
            ("payloadSize", .integer(-1)), ("payloadSize", .integer(Int64.min)), ("payloadSize", .string("1")), ("payloadSize", .double(1)),
            ("createdAt", .integer(0)), ("updatedAt", .string("now")), ("expirationDate", .integer(0)), ("expirationDate", .null),
            ("title", .null), ("originName", .integer(0)),
            ("supportsContinuationStreams", .integer(1)), ("needsSave", .string("no")),
        ]
        for (key, value) in cases {
            var s = full
            s[key] = value
            expectRejected(raw(0x03, .dictionary(["activity": .dictionary(s)])), "summary \(key) = \(value)")
        }
        for activity: PropertyValue in [.null, .array([]), .string("x"), .dictionary([:]), .boolean(false)] {
            expectRejected(raw(0x03, .dictionary(["activity": activity])), "summary = \(activity)")
        }
    }

    @Test func everyTruncationFailsCleanly() {
        for m in sampleMessages() {
            let bytes = PeerMessageCoding.encode(m)
            for n in 0..<bytes.count {
                do {
                    let got = try PeerMessageCoding.decode(Array(bytes.prefix(n)))
                    Issue.record("\(n) of \(bytes.count) bytes of \(m.typeCode) decoded as \(got)")
                } catch {
                    // Only a hello cut inside its first 9 bytes lacks the magic and versions.
                    let expected = m.typeCode == 0x01 && (1..<9).contains(n) ? "not-handoff" : "malformed"
                    #expect(error.code == expected, "\(n) of \(bytes.count) bytes of type \(m.typeCode)")
                }
            }
        }
    }

    @Test func everyTruncationOfAFetchedActivityIsMalformed() {
        let bytes = PeerMessageCoding.encode(.fetched(requestID: 77, .activity(everyFieldActivity(), stale: true)))
        #expect(bytes.count > 500)
        var failures: [Int] = []
        for n in 0..<bytes.count {
            do {
                _ = try PeerMessageCoding.decode(Array(bytes.prefix(n)))
                failures.append(n)
            } catch {
                if error.code != "malformed" { failures.append(n) }
            }
        }
        #expect(failures.isEmpty, "prefixes not refused as malformed: \(failures.prefix(10))")
    }

    @Test func deeplyNestedBodyIsRefused() {
        // A subscribe body {"a": [[[...100 deep...]]]}: over the binary decoder's depth limit.
        var bytes: [UInt8] = [0x02, 0x0A, 0x01, 0x01, 0x61]
        for _ in 0..<100 { bytes += [0x09, 0x01] }
        bytes.append(0x00)
        expectRejected(bytes)
        // Within the limit it is fine.
        var shallow: [UInt8] = [0x02, 0x0A, 0x01, 0x01, 0x61]
        for _ in 0..<10 { shallow += [0x09, 0x01] }
        shallow.append(0x00)
        #expect(expectAccepted(shallow) == .subscribe)
        // PeerProtocol.md §6.2: the body is depth 0; a value at depth 63 is fine, at 64 an error.
        func nested(_ arrays: Int) -> [UInt8] {
            var b: [UInt8] = [0x02, 0x0A, 0x01, 0x01, 0x61]
            for _ in 0..<arrays { b += [0x09, 0x01] }
            return b + [0x00]
        }
        #expect(expectAccepted(nested(62), "null at depth 63") == .subscribe)
        expectRejected(nested(63), "null at depth 64")
    }

    @Test func canonicallyEquivalentKeysAreDuplicates() {
        // PeerProtocol.md §6.1: "é" as c3 a9 and as 65 cc 81 are the same key.
        let body: [UInt8] = [0x0A, 0x02, 0x02, 0xC3, 0xA9, 0x00, 0x03, 0x65, 0xCC, 0x81, 0x00]
        expectRejected([0x02] + body)
        expectRejected([0x07, 0x0A, 0x03] + [0x04] + Array("code".utf8) + [0x05, 0x01, 0x78]
            + [0x07] + Array("message".utf8) + [0x05, 0x00] + [0x04] + Array("code".utf8) + [0x05, 0x01, 0x79], "code twice")
    }

    @Test func entriesInAnyOrderAreAccepted() {
        // PeerProtocol.md §6.1: a decoder SHOULD accept entries in any order.
        let unsorted: [UInt8] = [0x04, 0x0A, 0x02, 0x09] + Array("requestID".utf8) + [0x03, 0x02]
            + [0x0A] + Array("activityID".utf8) + [0x05, 0x20] + Array(idA.rawValue.utf8)
        #expect(expectAccepted(unsorted) == .fetch(requestID: 1, activityID: idA))
    }

    /// Decode never crashes, and refuses with a PeerProtocolError or yields a message
    /// that re-encodes and decodes to itself.
    @Test func fuzz() {
        var g = XorShift64(seed: 0x5EED_F00D_1234_5678)
        let seeds = sampleMessages().map(PeerMessageCoding.encode)
        var accepted = 0, refused = 0
        var failures: [String] = []

        func check(_ input: [UInt8]) {
            let m: PeerMessage
            do {
                m = try PeerMessageCoding.decode(input)
            } catch {
                refused += 1
                if error.code != "malformed" && error.code != "not-handoff" { failures.append("code \(error.code) for \(input)") }
                return
            }
            accepted += 1
            let again = PeerMessageCoding.encode(m)
            do {
                let m2 = try PeerMessageCoding.decode(again)
                if PeerMessageCoding.encode(m2) != again { failures.append("re-encoding differs for \(input)") }
                if m2 != m && !containsNaN(m) { failures.append("\(m) became \(m2) from \(input)") }
            } catch {
                failures.append("re-encoding of \(m) from \(input) refused: \(error)")
            }
        }

        // Random byte strings, mostly with a known type byte so bodies get exercised.
        for i in 0..<3000 {
            var input = g.bytes(g.below(48))
            if !input.isEmpty && i % 4 != 0 { input[0] = UInt8(1 + g.below(7)) }
            if i % 5 == 0, !input.isEmpty { input.insert(0x0A, at: 1) }
            if i % 7 == 0, input.first == 0x01 { input.replaceSubrange(1..<min(input.count, 5), with: helloMagic) }
            check(input)
        }
        // Random structurally valid bodies of random values.
        for _ in 0..<1000 {
            var d: [String: PropertyValue] = [:]
            let keys = ["requestID", "activityID", "activity", "stale", "errorCode", "errorMessage", "code", "message", "deviceName", "x"]
            for _ in 0..<g.below(5) { d[keys[g.below(keys.count)]] = randomValue(&g, depth: 2) }
            if g.below(2) == 0 { d["activityID"] = .string(idA.rawValue) }
            if g.below(2) == 0 { d["requestID"] = .integer(Int64(bitPattern: g.next())) }
            let type = UInt8(1 + g.below(7))
            check(type == 0x01 ? [0x01] + helloMagic + g.bytes(4) + PropertyBinaryEncoding.encode(.dictionary(d)) : raw(type, .dictionary(d)))
        }
        // Mutations of valid encodings.
        for _ in 0..<4000 {
            var input = seeds[g.below(seeds.count)]
            for _ in 0..<(1 + g.below(3)) {
                guard !input.isEmpty else { break }
                let at = g.below(input.count)
                switch g.below(6) {
                case 0: input[at] = g.byte()
                case 1: input[at] ^= UInt8(1) << UInt8(g.below(8))
                case 2: input.remove(at: at)
                case 3: input.insert(g.byte(), at: at)
                case 4: input.removeSubrange(at...)
                default: input[at] = [0x00, 0x01, 0x7F, 0x80, 0xFF][g.below(5)]
                }
            }
            check(input)
        }
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(5))")
        // The fuzz reached both outcomes (it is not all rejected at the first byte).
        #expect(accepted > 100)
        #expect(refused > 1000)
    }
}
