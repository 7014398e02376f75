import HandoffCore
import Testing

@Suite("Activity validation")
struct ActivityValidationTests {
    static let limits = ActivityLimits()

    func activity(type: String = "com.example.app.view", userInfo: UserInfo = [:], title: String = "",
                  webpageURL: String? = nil, keywords: [String] = [], required: [String] = []) -> Activity {
        Activity(id: ActivityID("00000000000000000000000000000001")!, activityType: type, title: title, userInfo: userInfo,
                 requiredUserInfoKeys: required, webpageURL: webpageURL, keywords: keywords,
                 createdAt: Timestamp(seconds: 1_795_255_200), origin: DeviceRef(name: "host"))
    }

    func error(_ a: Activity, limits: ActivityLimits = ActivityValidationTests.limits) -> ValidationError? {
        do {
            try ActivityValidation.validate(a, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyFieldActivityIsValid() throws {
        try ActivityValidation.validate(everyFieldActivity(), limits: Self.limits)
    }

    @Test func theSearchAndIdentityFieldsAreChecked() {
        func failing(_ change: (inout Activity) -> Void) -> String? {
            var a = activity()
            change(&a)
            return error(a)?.field
        }
        #expect(failing { $0.referrerURL = "file:///etc/passwd" } == "referrerURL")
        #expect(failing { $0.referrerURL = "https://example.com/ok" } == nil)
        #expect(failing { $0.persistentIdentifier = "" } == "persistentIdentifier")
        #expect(failing { $0.persistentIdentifier = String(repeating: "x", count: 257) } == "persistentIdentifier")
        #expect(failing { $0.persistentIdentifier = "note/42" } == nil)
        #expect(failing { $0.targetContentIdentifier = "a\nb" } == "targetContentIdentifier")
        #expect(failing { $0.contentDescription = String(repeating: "d", count: 4097) } == "contentDescription")
        #expect(failing { $0.displayName = String(repeating: "n", count: 1025) } == "displayName")
        #expect(failing { $0.thumbnail = Array("GIF89a".utf8) } == "thumbnail")
        #expect(failing { $0.thumbnail = [0xFF, 0xD8, 0xFF, 0xE0] } == nil)
        #expect(failing { $0.thumbnail = tinyPNG + [UInt8](repeating: 0, count: 32 * 1024) } == "thumbnail")
    }

    @Test func defaults() {
        #expect(Self.limits.maximumEncodedBytes == 65_536)
        #expect(ActivityLimits.defaultMaximumEncodedBytes == 64 * 1024)
        #expect(ActivityLimits.recommendedEncodedBytes == 3 * 1024)
        #expect(ActivityLimits(maximumEncodedBytes: 100).maximumEncodedBytes == 100)
    }

    // MARK: - activityType

    @Test(arguments: [
        "com.example", "com.example.editor.edit-note", "a.b", "A.B", "x1.y2", "123.456", "com.ex-ample.a-b-c",
        String(repeating: "a", count: 127) + "." + String(repeating: "b", count: 127),
    ])
    func acceptedTypes(_ type: String) throws {
        try ActivityValidation.validateType(type)
        #expect(error(activity(type: type)) == nil)
    }

    @Test(arguments: [
        "", "com", "example", ".com", "com.", "com..example", ".", "..", "com.example.", "com.exa mple", " com.example",
        "com.example ", "com.ex_ample", "com.exämple", "com.例え", "com/example", "com:example", "com.example\n", "com.example\u{0}",
        "https://com.example", "com.example!", "com.😀",
    ])
    func rejectedTypes(_ type: String) {
        let e = #expect(throws: ValidationError.self, "\(type)") { try ActivityValidation.validateType(type) }
        #expect(e?.field == "activityType")
        #expect(error(activity(type: type))?.field == "activityType")
    }

    @Test func emptyTypeIsRequired() {
        let e = #expect(throws: ValidationError.self) { try ActivityValidation.validateType("") }
        #expect(e?.problem == "is required")
    }

    @Test func typeLengthLimit() throws {
        let exactly255 = "com." + String(repeating: "a", count: 251)
        #expect(exactly255.utf8.count == 255)
        try ActivityValidation.validateType(exactly255)
        let e = #expect(throws: ValidationError.self) { try ActivityValidation.validateType(exactly255 + "a") }
        #expect(e?.field == "activityType")
        #expect(e?.problem.contains("255") == true)
        var small = ActivityLimits()
        small.maximumTypeLength = 10
        try ActivityValidation.validateType("com.abcdef", limits: small)
        #expect(throws: ValidationError.self) { try ActivityValidation.validateType("com.abcdefg", limits: small) }
    }

    // MARK: - webpageURL

    @Test(arguments: [
        "http://example.com", "https://example.com", "HTTP://EXAMPLE.COM", "HtTpS://example.com/path?q=1#f", "https://example.com:8443/",
        "http://127.0.0.1", "https://[::1]/", "https://user:pw@example.com/", "https://example.com?q", "https://xn--bcher-kva.example/",
    ])
    func acceptedWebpageURLs(_ url: String) throws {
        try ActivityValidation.validateWebpageURL(url)
        #expect(error(activity(webpageURL: url)) == nil)
    }

    @Test(arguments: [
        "", "ftp://example.com", "file:///etc/passwd", "javascript:alert(1)", "data:text/html,hi", "mailto:a@b.c",
        "http://", "https://", "http:///path", "https://?q=1", "https://#frag", "http:example.com", "https:/example.com",
        "example.com", "//example.com", "https://exa mple.com", "https://example.com/a b", "https://example.com/\n",
        " https://example.com", "httpx://example.com", "https//example.com", "ws://example.com",
    ])
    func rejectedWebpageURLs(_ url: String) {
        let e = #expect(throws: ValidationError.self, "\(url)") { try ActivityValidation.validateWebpageURL(url) }
        #expect(e?.field == "webpageURL")
        #expect(error(activity(webpageURL: url))?.field == "webpageURL")
    }

    @Test func webpageURLLengthLimit() throws {
        let base = "https://example.com/"
        let max = base + String(repeating: "a", count: Self.limits.maximumURLLength - base.utf8.count)
        try ActivityValidation.validateWebpageURL(max)
        let e = #expect(throws: ValidationError.self) { try ActivityValidation.validateWebpageURL(max + "a") }
        #expect(e?.field == "webpageURL")
        #expect(e?.problem.contains("8192") == true)
    }

    // MARK: - Title, keywords, required keys

    @Test func titleLengthLimit() {
        #expect(error(activity(title: String(repeating: "é", count: 1024))) == nil)
        #expect(error(activity(title: String(repeating: "é", count: 1025)))?.field == "title")
    }

    @Test func keywordLimits() {
        #expect(error(activity(keywords: (0..<64).map { "k\($0)" })) == nil)
        let tooMany = error(activity(keywords: (0..<65).map { "k\($0)" }))
        #expect(tooMany?.field == "keywords")
        #expect(tooMany?.problem.contains("64") == true)
        #expect(error(activity(keywords: ["ok", String(repeating: "x", count: 256)])) == nil)
        #expect(error(activity(keywords: ["ok", String(repeating: "x", count: 257)]))?.field == "keywords[1]")
        #expect(error(activity(keywords: ["ok", "fine", ""]))?.field == "keywords[2]")
        var small = ActivityLimits()
        small.maximumKeywords = 2
        small.maximumKeywordLength = 3
        #expect(error(activity(keywords: ["a", "b", "c"]), limits: small)?.field == "keywords")
        #expect(error(activity(keywords: ["abcd"]), limits: small)?.field == "keywords[0]")
        #expect(error(activity(keywords: ["abc", "de"]), limits: small) == nil)
    }

    @Test func requiredKeysMustNotBeEmpty() {
        #expect(error(activity(required: ["a", ""]))?.field == "requiredUserInfoKeys[1]")
        #expect(error(activity(required: ["a", "missing-from-userInfo"])) == nil)
    }

    @Test func missingRequiredKeys() {
        let a = activity(userInfo: ["a": .null], required: ["a", "b", "c"])
        #expect(a.missingRequiredKeys == ["b", "c"])
    }

    // MARK: - userInfo values

    @Test(arguments: [Double.nan, -Double.nan, .infinity, -.infinity, .signalingNaN])
    func nonFiniteDoublesAreRejectedAnywhere(_ d: Double) {
        let cases: [(UserInfo, String)] = [
            (["x": .double(d)], "userInfo.x"),
            (["x": .array([.integer(1), .double(d)])], "userInfo.x[1]"),
            (["x": .dictionary(["y": .dictionary(["z": .double(d)])])], "userInfo.x.y.z"),
            (["x": .set([.string("a"), .array([.double(d)])])], "userInfo.x[1][0]"),
            (["a": .double(1), "x": .array([.set([.dictionary(["k": .double(d)])])])], "userInfo.x[0][0].k"),
        ]
        for (info, path) in cases {
            let e = error(activity(userInfo: info))
            #expect(e?.field == path)
            #expect(e?.problem.contains("finite") == true)
        }
    }

    @Test func finiteExtremesAreFine() {
        #expect(error(activity(userInfo: ["x": .array([.double(.greatestFiniteMagnitude), .double(.leastNonzeroMagnitude), .double(-0.0)])])) == nil)
    }

    @Test func setsMustNotRepeatElements() {
        let dup = error(activity(userInfo: ["s": .set([.integer(1), .string("1"), .integer(1)])]))
        #expect(dup?.field == "userInfo.s[2]")
        #expect(dup?.problem.contains("once") == true)
        let nested = error(activity(userInfo: ["s": .set([.array([.integer(1)]), .array([.integer(1)])])]))
        #expect(nested?.field == "userInfo.s[1]")
        let dicts = error(activity(userInfo: ["s": .set([.dictionary(["a": .null, "b": .null]), .dictionary(["b": .null, "a": .null])])]))
        #expect(dicts?.field == "userInfo.s[1]")
        // Distinct kinds with "equal" contents are distinct elements.
        #expect(error(activity(userInfo: ["s": .set([.integer(1), .double(1), .string("1"), .url("a:1"), .array([]), .set([])])])) == nil)
        // The same element in an array is fine.
        #expect(error(activity(userInfo: ["a": .array([.integer(1), .integer(1)])])) == nil)
        // A duplicate inside a set nested in an array is found too.
        #expect(error(activity(userInfo: ["a": .array([.null, .set([.null, .null])])]))?.field == "userInfo.a[1][1]")
    }

    @Test(arguments: [
        "https://example.com", "mailto:someone@example.com", "urn:isbn:0451450523", "x-app+v2.1:open?id=3", "a:", "file:///tmp/x",
        "com.example.app://open",
    ])
    func absoluteURLValuesAreAccepted(_ url: String) {
        #expect(error(activity(userInfo: ["u": .url(url)])) == nil)
    }

    @Test(arguments: ["", "relative/path", "/abs/path", ":nothing", "1http://x", "-x:y", "ht tp://x", "ht_tp://x", "é:x", "//host/p", "?q=1"])
    func relativeURLValuesAreRejected(_ url: String) {
        let e = error(activity(userInfo: ["list": .array([.null, .url(url)])]))
        #expect(e?.field == "userInfo.list[1]", "\(url)")
        #expect(e?.problem.contains("absolute") == true)
    }

    @Test func nestingLimit() {
        func nested(_ levels: Int) -> PropertyValue {
            var v = PropertyValue.array([])
            for _ in 1..<levels { v = .array([v]) }
            return v
        }
        // A userInfo value is level 1.
        #expect(error(activity(userInfo: ["deep": nested(Self.limits.maximumNesting)])) == nil)
        let e = error(activity(userInfo: ["deep": nested(Self.limits.maximumNesting + 1)]))
        #expect(e?.field == "userInfo.deep" + String(repeating: "[0]", count: Self.limits.maximumNesting))
        #expect(e?.problem.contains("nested") == true)
        // Dictionaries and sets count too.
        var d = PropertyValue.null
        for _ in 0..<Self.limits.maximumNesting { d = .dictionary(["k": d]) }
        #expect(error(activity(userInfo: ["d": d]))?.field == "userInfo.d" + String(repeating: ".k", count: Self.limits.maximumNesting))
        var s = PropertyValue.set([])
        for _ in 1..<(Self.limits.maximumNesting + 1) { s = .set([s]) }
        #expect(error(activity(userInfo: ["s": s])) != nil)
        var small = ActivityLimits()
        small.maximumNesting = 2
        #expect(error(activity(userInfo: ["x": .array([.integer(1)])]), limits: small) == nil)
        #expect(error(activity(userInfo: ["x": .array([.array([])])]), limits: small) == nil)
        #expect(error(activity(userInfo: ["x": .array([.array([.integer(1)])])]), limits: small)?.field == "userInfo.x[0][0]")
    }

    @Test func firstBadKeyInSortedOrderIsReported() {
        let e = error(activity(userInfo: ["b": .double(.nan), "a": .url("nope"), "c": .double(.infinity)]))
        #expect(e?.field == "userInfo.a")
    }

    // MARK: - Size cap

    /// An activity whose encoded size is exactly `size`, padded with a userInfo string.
    func activity(ofEncodedSize size: Int) -> Activity {
        // Past 16 KiB the string's length prefix stays 3 bytes, so size grows one for one.
        var a = activity(userInfo: ["pad": .string(String(repeating: "x", count: 20_000))])
        let over = ActivityPropertyList.encodedSize(of: a) - size
        a.userInfo["pad"] = .string(String(repeating: "x", count: 20_000 - over))
        return a
    }

    @Test func encodedSizeMatchesTheBinaryEncoding() {
        let a = everyFieldActivity()
        #expect(ActivityPropertyList.encodedSize(of: a) == PropertyBinaryEncoding.encode(ActivityPropertyList.encode(a)).count)
    }

    @Test func defaultCap() {
        let cap = ActivityLimits.defaultMaximumEncodedBytes
        let justUnder = activity(ofEncodedSize: cap)
        #expect(ActivityPropertyList.encodedSize(of: justUnder) == cap)
        #expect(error(justUnder) == nil)
        let justOver = activity(ofEncodedSize: cap + 1)
        #expect(ActivityPropertyList.encodedSize(of: justOver) == cap + 1)
        let e = error(justOver)
        #expect(e?.field == "activity")
        #expect(e?.problem.contains("continuation stream") == true)
        #expect(e?.problem.contains("\(cap + 1)") == true)
        #expect(e?.problem.contains("\(cap)-byte") == true)
    }

    @Test func configurableSmallerCap() {
        let a = activity(userInfo: ["note": .string(String(repeating: "n", count: 3000))])
        let size = ActivityPropertyList.encodedSize(of: a)
        #expect(size > ActivityLimits.recommendedEncodedBytes)
        #expect(error(a) == nil)
        #expect(error(a, limits: ActivityLimits(maximumEncodedBytes: size)) == nil)
        let e = error(a, limits: ActivityLimits(maximumEncodedBytes: size - 1))
        #expect(e?.field == "activity")
        #expect(e?.problem.contains("continuation stream") == true)
        #expect(error(a, limits: ActivityLimits(maximumEncodedBytes: ActivityLimits.recommendedEncodedBytes))?.field == "activity")
    }

    @Test func sizeCountsEveryField() {
        let plain = activity()
        let base = ActivityPropertyList.encodedSize(of: plain)
        var titled = plain
        titled.title = "12345"
        #expect(ActivityPropertyList.encodedSize(of: titled) == base + 5)
        var withURL = plain
        withURL.webpageURL = "https://e.x"
        #expect(ActivityPropertyList.encodedSize(of: withURL) > base + 11)
        var withOriginID = plain
        withOriginID.origin.id = "abc"
        #expect(ActivityPropertyList.encodedSize(of: withOriginID) > base + 3)
    }
}
