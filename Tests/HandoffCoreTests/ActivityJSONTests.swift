import HandoffCore
import Testing

@Suite("Activity JSON")
struct ActivityJSONTests {
    static let now = Timestamp(seconds: 1_795_255_200, nanoseconds: 7)

    func object(_ text: String) throws -> JSONObject {
        try #require(try json(text).objectValue)
    }

    func minimal() -> Activity {
        Activity(id: ActivityID("ffffffffffffffffffffffffffffffff")!, activityType: "a.b",
                 createdAt: Timestamp(seconds: 0), origin: DeviceRef(name: ""))
    }

    // MARK: - Activity round trips

    @Test func everyFieldSurvivesJSON() throws {
        let a = everyFieldActivity()
        let o = ActivityJSON.encode(a)
        #expect(try ActivityJSON.decodeActivity(o) == a)
        for text in [JSONValue.object(o).serialized(), JSONValue.object(o).prettySerialized()] {
            let back = try ActivityJSON.decodeActivity(try object(text))
            #expect(back == a)
            #expect(sameBits(.dictionary(back.userInfo), .dictionary(a.userInfo)))
        }
    }

    @Test func minimalActivitySurvivesJSON() throws {
        let a = minimal()
        let o = ActivityJSON.encode(a)
        #expect(o["webpageURL"] == .null)
        #expect(o["expirationDate"] == .null)
        #expect(o["origin"] == .object(["name": .string(""), "id": .null]))
        #expect(try ActivityJSON.decodeActivity(try object(JSONValue.object(o).serialized())) == a)
    }

    @Test func encodedFieldsAndOrder() {
        let o = ActivityJSON.encode(everyFieldActivity())
        #expect(o.keys == [
            "id", "activityType", "title", "userInfo", "requiredUserInfoKeys", "searchableUserInfoKeys", "webpageURL", "expirationDate", "keywords",
            "eligibleForHandoff", "eligibleForSearch", "eligibleForPublicIndexing", "supportsContinuationStreams", "needsSave",
            "createdAt", "updatedAt", "origin", "referrerURL", "persistentIdentifier", "targetContentIdentifier",
            "eligibleForPrediction", "contentDescription", "displayName", "thumbnail",
        ])
        #expect(o["thumbnail"] == .string(Base64.encode(tinyPNG)))
        #expect(o["id"] == .string("0123456789abcdef0123456789abcdef"))
        #expect(o["createdAt"] == .string("2026-11-18T11:06:40.000000001Z"))
        #expect(o["updatedAt"] == .string("2026-11-18T11:08:43.120Z"))
        #expect(o["origin"] == .object(["name": .string("laptop"), "id": .string("dev-1234")]))
        #expect(o["eligibleForHandoff"] == .bool(false))
    }

    @Test func everyFieldSurvivesThePropertyListAndBinary() throws {
        let a = everyFieldActivity()
        let plist = ActivityPropertyList.encode(a)
        let bytes = PropertyBinaryEncoding.encode(plist)
        let decodedPlist = try PropertyBinaryEncoding.decode(bytes)
        #expect(decodedPlist == plist)
        let back = try ActivityPropertyList.decode(decodedPlist)
        #expect(back == a)
        #expect(sameBits(.dictionary(back.userInfo), .dictionary(a.userInfo)))
        #expect(ActivityPropertyList.encodedSize(of: a) == bytes.count)
    }

    @Test func minimalActivitySurvivesThePropertyList() throws {
        let a = minimal()
        guard case .dictionary(let d) = ActivityPropertyList.encode(a) else { Issue.record("not a dictionary"); return }
        #expect(d["webpageURL"] == nil && d["expirationDate"] == nil && d["originID"] == nil)
        #expect(try ActivityPropertyList.decode(try PropertyBinaryEncoding.decode(PropertyBinaryEncoding.encode(.dictionary(d)))) == a)
    }

    @Test func propertyListUsesTypedValues() {
        guard case .dictionary(let d) = ActivityPropertyList.encode(everyFieldActivity()) else { Issue.record("not a dictionary"); return }
        #expect(d["webpageURL"] == .url("https://example.com/notes/42?x=1#top"))
        #expect(d["expirationDate"] == .date(Timestamp(seconds: 1_900_000_000, nanoseconds: 500_000_000)))
        #expect(d["originName"] == .string("laptop"))
        #expect(d["originID"] == .string("dev-1234"))
        #expect(d["needsSave"] == .boolean(true))
    }

    @Test func propertyListDecodeErrorsNameTheField() {
        guard case .dictionary(let good) = ActivityPropertyList.encode(everyFieldActivity()) else { Issue.record("not a dictionary"); return }
        let cases: [(String, PropertyValue?)] = [
            ("id", .string("nope")), ("id", nil), ("activityType", .integer(1)), ("userInfo", .array([])), ("userInfo", nil),
            ("webpageURL", .string("https://x")), ("expirationDate", .string("2026")), ("keywords", .array([.integer(1)])),
            ("keywords", nil), ("needsSave", .integer(1)), ("createdAt", nil), ("originName", nil), ("originID", .integer(2)),
        ]
        for (field, value) in cases {
            var d = good
            d[field] = value
            let e = #expect(throws: ValidationError.self, "\(field)") { try ActivityPropertyList.decode(.dictionary(d)) }
            #expect(e?.field == field)
        }
        #expect(throws: ValidationError.self) { try ActivityPropertyList.decode(.array([])) }
    }

    @Test func randomActivitiesSurviveBothEncodings() throws {
        var g = XorShift64(seed: 0xAC71)
        for n in 0..<300 {
            var info: UserInfo = [:]
            for k in 0..<g.below(5) { info["k\(k)" + randomString(&g)] = randomValue(&g, depth: 4) }
            var a = everyFieldActivity()
            a.userInfo = info
            a.title = randomString(&g)
            a.keywords = (0..<g.below(3)).map { _ in randomString(&g) }
            a.webpageURL = n % 2 == 0 ? nil : "https://example.com/\(n)"
            a.expirationDate = n % 3 == 0 ? nil : Timestamp(seconds: Int64(g.below(4_000_000_000)), nanoseconds: Int32(g.below(1_000_000_000)))
            a.origin = DeviceRef(name: randomString(&g), id: n % 2 == 0 ? nil : randomString(&g))
            let viaJSON = try ActivityJSON.decodeActivity(try object(JSONValue.object(ActivityJSON.encode(a)).serialized()))
            #expect(viaJSON == a)
            #expect(sameBits(.dictionary(viaJSON.userInfo), .dictionary(a.userInfo)))
            let viaBinary = try ActivityPropertyList.decode(try PropertyBinaryEncoding.decode(PropertyBinaryEncoding.encode(ActivityPropertyList.encode(a))))
            #expect(viaBinary == a)
            #expect(sameBits(.dictionary(viaBinary.userInfo), .dictionary(a.userInfo)))
        }
    }

    @Test func decodeActivityIgnoresUnknownFieldsAndRequiresIdentity() throws {
        var o = ActivityJSON.encode(everyFieldActivity())
        o["fromTheFuture"] = .integer(1)
        o["state"] = .string("current")
        #expect(try ActivityJSON.decodeActivity(o) == everyFieldActivity())
        for field in ["id", "createdAt", "updatedAt", "activityType"] {
            var missing = ActivityJSON.encode(everyFieldActivity())
            missing[field] = nil
            #expect(throws: ValidationError.self, "\(field)") { try ActivityJSON.decodeActivity(missing) }
        }
        var badID = ActivityJSON.encode(everyFieldActivity())
        badID["id"] = .string("xyz")
        #expect(#expect(throws: ValidationError.self) { try ActivityJSON.decodeActivity(badID) }?.field == "id")
    }

    @Test func missingUpdatedAtIsReportedAsUpdatedAt() {
        var o = ActivityJSON.encode(everyFieldActivity())
        o["updatedAt"] = nil
        let e = #expect(throws: ValidationError.self) { try ActivityJSON.decodeActivity(o) }
        #expect(e?.field == "updatedAt")
        var c = ActivityJSON.encode(everyFieldActivity())
        c["createdAt"] = nil
        #expect(#expect(throws: ValidationError.self) { try ActivityJSON.decodeActivity(c) }?.field == "createdAt")
    }

    @Test func decodeActivityReportsBadFieldTypes() {
        let cases: [(String, JSONValue, String)] = [
            ("title", .integer(1), "title"), ("userInfo", .array([]), "userInfo"), ("keywords", .array([.integer(1)]), "keywords[0]"),
            ("eligibleForSearch", .string("yes"), "eligibleForSearch"), ("expirationDate", .string("tomorrow"), "expirationDate"),
            ("origin", .string("laptop"), "origin"), ("origin", .object(["name": .integer(3)]), "origin.name"),
            ("userInfo", .object(["a": .object(["$date": .string("bad")])]), "userInfo.a"),
        ]
        for (field, value, path) in cases {
            var o = ActivityJSON.encode(everyFieldActivity())
            o[field] = value
            let e = #expect(throws: ValidationError.self, "\(field)") { try ActivityJSON.decodeActivity(o) }
            #expect(e?.field == path)
        }
    }

    // MARK: - Drafts

    @Test func draftRoundTrip() throws {
        var d = ActivityDraft(activityType: "com.example.read")
        d.title = "Reading"
        d.userInfo = everyFieldActivity().userInfo
        d.requiredUserInfoKeys = ["nested", "scalars"]
        d.webpageURL = "https://example.com/"
        d.expirationDate = Timestamp(seconds: 1_900_000_000, nanoseconds: 1)
        d.keywords = ["b", "a"]
        d.eligibleForHandoff = false
        d.eligibleForSearch = true
        d.eligibleForPublicIndexing = true
        d.supportsContinuationStreams = true
        d.needsSave = true
        d.referrerURL = "https://example.com/from"
        d.persistentIdentifier = "doc/7"
        d.targetContentIdentifier = "main"
        d.eligibleForPrediction = true
        d.contentDescription = "What it is"
        d.displayName = "Doc 7"
        d.thumbnail = tinyPNG
        let text = JSONValue.object(ActivityJSON.encode(d)).serialized()
        #expect(try ActivityJSON.decodeDraft(try object(text)) == d)
        #expect(d.makeActivity(id: .random(), now: Timestamp(seconds: 1), origin: DeviceRef(name: "x")).thumbnail == tinyPNG)
    }

    @Test func minimalDraft() throws {
        let d = try ActivityJSON.decodeDraft(try object(#"{"activityType": "com.example.x"}"#))
        #expect(d == ActivityDraft(activityType: "com.example.x"))
        #expect(d.eligibleForHandoff)
        #expect(!d.eligibleForSearch)
        #expect(ActivityJSON.encode(d) == ["activityType": .string("com.example.x")])
    }

    @Test func draftNullsMeanAbsent() throws {
        let d = try ActivityJSON.decodeDraft(try object(#"{"activityType": "a.b", "title": null, "webpageURL": null, "keywords": null, "eligibleForHandoff": null}"#))
        #expect(d == ActivityDraft(activityType: "a.b"))
    }

    @Test func draftRequiredKeysAreDeduplicatedAndSorted() throws {
        let d = try ActivityJSON.decodeDraft(try object(#"{"activityType": "a.b", "requiredUserInfoKeys": ["z", "a", "z", "m"]}"#))
        #expect(d.requiredUserInfoKeys == ["a", "m", "z"])
    }

    @Test(arguments: ["bogus", "id", "createdAt", "origin", "state", "activitytype", "userinfo", "Title"])
    func draftRejectsUnknownFieldsByName(_ field: String) throws {
        let o = try object(#"{"activityType": "a.b", "\#(field)": 1}"#)
        let e = #expect(throws: ValidationError.self) { try ActivityJSON.decodeDraft(o) }
        #expect(e?.field == field)
        #expect(e?.problem == "unknown field")
    }

    @Test func draftExtraFieldsAreAllowedWhenNamed() throws {
        let o = try object(#"{"activityType": "a.b", "attach": true}"#)
        #expect(try ActivityJSON.decodeDraft(o, extraFields: ["attach"]).activityType == "a.b")
        #expect(throws: ValidationError.self) { try ActivityJSON.decodeDraft(o, extraFields: ["other"]) }
    }

    @Test func fullActivityJSONIsNotADraft() {
        let e = #expect(throws: ValidationError.self) { try ActivityJSON.decodeDraft(ActivityJSON.encode(everyFieldActivity())) }
        #expect(e?.problem == "unknown field")
    }

    @Test(arguments: [
        (#"{}"#, "activityType"), (#"{"activityType": null}"#, "activityType"), (#"{"activityType": 5}"#, "activityType"),
        (#"{"activityType": "a.b", "title": 5}"#, "title"), (#"{"activityType": "a.b", "title": ["x"]}"#, "title"),
        (#"{"activityType": "a.b", "userInfo": []}"#, "userInfo"), (#"{"activityType": "a.b", "userInfo": "x"}"#, "userInfo"),
        (#"{"activityType": "a.b", "requiredUserInfoKeys": "a"}"#, "requiredUserInfoKeys"),
        (#"{"activityType": "a.b", "requiredUserInfoKeys": ["a", 1]}"#, "requiredUserInfoKeys[1]"),
        (#"{"activityType": "a.b", "webpageURL": 1}"#, "webpageURL"), (#"{"activityType": "a.b", "webpageURL": {"$url": "https://x"}}"#, "webpageURL"),
        (#"{"activityType": "a.b", "expirationDate": "2026-11-21"}"#, "expirationDate"),
        (#"{"activityType": "a.b", "expirationDate": 1795255200}"#, "expirationDate"),
        (#"{"activityType": "a.b", "keywords": [true]}"#, "keywords[0]"), (#"{"activityType": "a.b", "keywords": {}}"#, "keywords"),
        (#"{"activityType": "a.b", "eligibleForHandoff": "true"}"#, "eligibleForHandoff"),
        (#"{"activityType": "a.b", "eligibleForSearch": 1}"#, "eligibleForSearch"),
        (#"{"activityType": "a.b", "eligibleForPublicIndexing": 0}"#, "eligibleForPublicIndexing"),
        (#"{"activityType": "a.b", "supportsContinuationStreams": []}"#, "supportsContinuationStreams"),
        (#"{"activityType": "a.b", "needsSave": "no"}"#, "needsSave"),
        (#"{"activityType": "a.b", "userInfo": {"x": {"$bogus": 1}}}"#, "userInfo.x"),
        (#"{"activityType": "a.b", "userInfo": {"x": [{"$data": "***"}]}}"#, "userInfo.x[0]"),
    ])
    func draftRejectsWrongTypes(_ text: String, _ field: String) throws {
        let o = try object(text)
        let e = #expect(throws: ValidationError.self, "\(text)") { try ActivityJSON.decodeDraft(o) }
        #expect(e?.field == field, "\(text)")
    }

    @Test func wrongTypeMessagesNameBothTypes() throws {
        let e = #expect(throws: ValidationError.self) { try ActivityJSON.decodeDraft(try object(#"{"activityType": "a.b", "title": 1.5}"#)) }
        #expect(e?.problem == "must be a string, not number")
    }

    @Test func makeActivity() {
        var d = ActivityDraft(activityType: "a.b")
        d.requiredUserInfoKeys = ["y", "x", "y"]
        d.title = "t"
        let id = ActivityID.random()
        let a = d.makeActivity(id: id, now: Self.now, origin: DeviceRef(name: "h", id: "i"))
        #expect(a.id == id)
        #expect(a.createdAt == Self.now && a.updatedAt == Self.now)
        #expect(a.requiredUserInfoKeys == ["x", "y"])
        #expect(a.title == "t")
        #expect(a.origin == DeviceRef(name: "h", id: "i"))
    }

    // MARK: - Updates

    func base() -> Activity {
        var a = minimal()
        a.title = "old"
        a.userInfo = ["keep": .integer(1), "change": .integer(2), "drop": .integer(3)]
        a.webpageURL = "https://old.example/"
        a.expirationDate = Timestamp(seconds: 2_000_000_000)
        a.keywords = ["k"]
        a.requiredUserInfoKeys = ["keep"]
        return a
    }

    func update(_ text: String) throws -> ActivityUpdate {
        try ActivityJSON.decodeUpdate(try object(text))
    }

    @Test func emptyUpdateChangesOnlyUpdatedAt() throws {
        let u = try update("{}")
        #expect(u == ActivityUpdate())
        let a = u.applied(to: base(), now: Self.now)
        var expected = base()
        expected.updatedAt = Self.now
        #expect(a == expected)
    }

    @Test func mergeIsTheDefault() throws {
        let u = try update(#"{"userInfo": {"change": 20, "new": {"$date": "2026-11-21T10:00:00Z"}}}"#)
        #expect(u.userInfoMode == .merge)
        let a = u.applied(to: base(), now: Self.now)
        #expect(a.userInfo == ["keep": .integer(1), "change": .integer(20), "drop": .integer(3), "new": .date(Timestamp(seconds: 1_795_255_200))])
    }

    @Test func explicitMerge() throws {
        let a = try update(#"{"userInfo": {"change": 20}, "userInfoMode": "merge"}"#).applied(to: base(), now: Self.now)
        #expect(a.userInfo == ["keep": .integer(1), "change": .integer(20), "drop": .integer(3)])
    }

    @Test func replace() throws {
        let a = try update(#"{"userInfo": {"only": true}, "userInfoMode": "replace"}"#).applied(to: base(), now: Self.now)
        #expect(a.userInfo == ["only": .boolean(true)])
    }

    @Test func replaceWithoutUserInfoClearsIt() throws {
        let u = try update(#"{"userInfoMode": "replace"}"#)
        #expect(u.userInfo == [:])
        #expect(u.applied(to: base(), now: Self.now).userInfo == [:])
    }

    @Test func removeUserInfoKeys() throws {
        let a = try update(#"{"removeUserInfoKeys": ["drop", "absent"]}"#).applied(to: base(), now: Self.now)
        #expect(a.userInfo == ["keep": .integer(1), "change": .integer(2)])
        // Removal happens after the merge, so a key both set and removed is gone.
        let b = try update(#"{"userInfo": {"x": 1, "keep": 5}, "removeUserInfoKeys": ["x"]}"#).applied(to: base(), now: Self.now)
        #expect(b.userInfo == ["keep": .integer(5), "change": .integer(2), "drop": .integer(3)])
    }

    @Test func nullClearsWebpageURLAndExpiration() throws {
        let u = try update(#"{"webpageURL": null, "expirationDate": null}"#)
        #expect(u.webpageURL == .some(nil))
        #expect(u.expirationDate == .some(nil))
        let a = u.applied(to: base(), now: Self.now)
        #expect(a.webpageURL == nil)
        #expect(a.expirationDate == nil)
        #expect(a.title == "old")
    }

    @Test func absentFieldsAreKept() throws {
        let u = try update(#"{"title": "new"}"#)
        #expect(u.webpageURL == nil)
        #expect(u.expirationDate == nil)
        let a = u.applied(to: base(), now: Self.now)
        #expect(a.title == "new")
        #expect(a.webpageURL == "https://old.example/")
        #expect(a.expirationDate == Timestamp(seconds: 2_000_000_000))
        #expect(a.keywords == ["k"])
        #expect(a.requiredUserInfoKeys == ["keep"])
    }

    @Test func everyFieldCanBeUpdated() throws {
        let u = try update(#"""
            {"title": "t2", "webpageURL": "https://new.example/", "expirationDate": "2030-01-01T00:00:00.5Z",
             "keywords": [], "requiredUserInfoKeys": ["b", "a", "b"], "eligibleForHandoff": false, "eligibleForSearch": true,
             "eligibleForPublicIndexing": true, "supportsContinuationStreams": true, "needsSave": true}
            """#)
        let a = u.applied(to: base(), now: Self.now)
        #expect(a.title == "t2")
        #expect(a.webpageURL == "https://new.example/")
        #expect(a.expirationDate == Timestamp(rfc3339: "2030-01-01T00:00:00.5Z"))
        #expect(a.keywords == [])
        #expect(a.requiredUserInfoKeys == ["a", "b"])
        #expect(!a.eligibleForHandoff && a.eligibleForSearch && a.eligibleForPublicIndexing && a.supportsContinuationStreams && a.needsSave)
        #expect(a.id == base().id && a.createdAt == base().createdAt && a.updatedAt == Self.now)
    }

    @Test func updateRoundTripsThroughJSON() throws {
        var u = ActivityUpdate()
        u.title = "x"
        u.userInfo = ["$k": .set([.integer(1)]), "d": .data([1, 2])]
        u.userInfoMode = .replace
        u.removeUserInfoKeys = ["gone"]
        u.requiredUserInfoKeys = ["d"]
        u.webpageURL = .some(nil)
        u.expirationDate = .some(Timestamp(seconds: 5, nanoseconds: 5))
        u.keywords = ["a"]
        u.eligibleForHandoff = true
        u.eligibleForSearch = false
        u.eligibleForPublicIndexing = true
        u.supportsContinuationStreams = false
        u.needsSave = true
        u.referrerURL = .some("https://example.com/r")
        u.persistentIdentifier = .some(nil)
        u.targetContentIdentifier = .some("t")
        u.eligibleForPrediction = true
        u.contentDescription = .some("d")
        u.displayName = .some(nil)
        u.thumbnail = .some(tinyPNG)
        #expect(try update(JSONValue.object(ActivityJSON.encode(u)).serialized()) == u)
        let cleared = u.applied(to: everyFieldActivity(), now: Self.now)
        #expect(cleared.persistentIdentifier == nil && cleared.displayName == nil && cleared.referrerURL == "https://example.com/r")
        var clearOnly = ActivityUpdate()
        clearOnly.expirationDate = .some(nil)
        #expect(ActivityJSON.encode(clearOnly) == ["expirationDate": .null])
        #expect(try update(JSONValue.object(ActivityJSON.encode(clearOnly)).serialized()) == clearOnly)
        #expect(ActivityJSON.encode(ActivityUpdate()) == JSONObject())
    }

    @Test(arguments: [#""Merge""#, #""append""#, #""""#, "5", "true"])
    func unknownUserInfoModeIsRejected(_ mode: String) throws {
        let e = #expect(throws: ValidationError.self) { try update(#"{"userInfoMode": \#(mode)}"#) }
        #expect(e?.field == "userInfoMode")
    }

    @Test(arguments: [
        (#"{"bogus": 1}"#, "bogus"), (#"{"activityType": "a.b"}"#, "activityType"), (#"{"id": "x"}"#, "id"),
        (#"{"title": 1}"#, "title"), (#"{"removeUserInfoKeys": "a"}"#, "removeUserInfoKeys"),
        (#"{"removeUserInfoKeys": [1]}"#, "removeUserInfoKeys[0]"), (#"{"webpageURL": 3}"#, "webpageURL"),
        (#"{"expirationDate": "soon"}"#, "expirationDate"), (#"{"userInfo": {"a": {"$x": 1}}}"#, "userInfo.a"),
        (#"{"needsSave": "yes"}"#, "needsSave"), (#"{"keywords": [null]}"#, "keywords[0]"),
    ])
    func updateRejectsUnknownFieldsAndWrongTypes(_ text: String, _ field: String) {
        let e = #expect(throws: ValidationError.self, "\(text)") { try update(text) }
        #expect(e?.field == field, "\(text)")
    }

    // MARK: - Activity helpers

    @Test func expiry() {
        var a = minimal()
        #expect(!a.isExpired(at: Timestamp(seconds: Int64.max)))
        a.expirationDate = Timestamp(seconds: 100)
        #expect(!a.isExpired(at: Timestamp(seconds: 99, nanoseconds: 999_999_999)))
        #expect(a.isExpired(at: Timestamp(seconds: 100)))
        #expect(a.isExpired(at: Timestamp(seconds: 101)))
    }

    @Test func updatedAtDefaultsToCreatedAt() {
        let a = Activity(id: ActivityID.random(), activityType: "a.b", createdAt: Self.now, origin: DeviceRef(name: "x"))
        #expect(a.updatedAt == Self.now)
    }
}
