/// Activities, drafts and updates in the control API's JSON (Docs/LocalAPI.md).
public enum ActivityJSON {
    public static func encode(_ a: Activity) -> JSONObject {
        var o = JSONObject()
        o["id"] = .string(a.id.rawValue)
        o["activityType"] = .string(a.activityType)
        o["title"] = .string(a.title)
        o["userInfo"] = .object(TypedJSON.encode(dictionary: a.userInfo))
        o["requiredUserInfoKeys"] = .array(a.requiredUserInfoKeys.map(JSONValue.string))
        o["searchableUserInfoKeys"] = .array(a.searchableUserInfoKeys.map(JSONValue.string))
        o["webpageURL"] = a.webpageURL.map(JSONValue.string) ?? .null
        o["expirationDate"] = a.expirationDate.map { .string($0.rfc3339) } ?? .null
        o["keywords"] = .array(a.keywords.map(JSONValue.string))
        o["eligibleForHandoff"] = .bool(a.eligibleForHandoff)
        o["eligibleForSearch"] = .bool(a.eligibleForSearch)
        o["eligibleForPublicIndexing"] = .bool(a.eligibleForPublicIndexing)
        o["supportsContinuationStreams"] = .bool(a.supportsContinuationStreams)
        o["needsSave"] = .bool(a.needsSave)
        o["createdAt"] = .string(a.createdAt.rfc3339)
        o["updatedAt"] = .string(a.updatedAt.rfc3339)
        o["origin"] = .object(["name": .string(a.origin.name), "id": a.origin.id.map(JSONValue.string) ?? .null])
        o["referrerURL"] = a.referrerURL.map(JSONValue.string) ?? .null
        o["persistentIdentifier"] = a.persistentIdentifier.map(JSONValue.string) ?? .null
        o["targetContentIdentifier"] = a.targetContentIdentifier.map(JSONValue.string) ?? .null
        o["eligibleForPrediction"] = .bool(a.eligibleForPrediction)
        o["contentDescription"] = a.contentDescription.map(JSONValue.string) ?? .null
        o["displayName"] = a.displayName.map(JSONValue.string) ?? .null
        o["thumbnail"] = a.thumbnail.map { .string(Base64.encode($0)) } ?? .null
        return o
    }

    /// Reads an activity the daemon wrote. Fields it does not know are ignored, so an
    /// older client keeps working against a newer daemon.
    public static func decodeActivity(_ o: JSONObject) throws(ValidationError) -> Activity {
        var r = JSONFieldReader(o)
        guard let id = ActivityID(try r.requiredString("id")) else { throw ValidationError(field: "id", problem: "is not an activity id") }
        guard let created = try r.timestamp("createdAt") else { throw ValidationError(field: "createdAt", problem: "is required") }
        guard let updated = try r.timestamp("updatedAt") else { throw ValidationError(field: "updatedAt", problem: "is required") }
        var origin = DeviceRef(name: "")
        if let oo = try r.object("origin") {
            var orr = JSONFieldReader(oo, path: "origin")
            origin = DeviceRef(name: try orr.string("name") ?? "", id: try orr.string("id"))
        }
        var a = Activity(id: id, activityType: try r.requiredString("activityType"), createdAt: created, updatedAt: updated, origin: origin)
        try readContent(&r, into: &a)
        return a
    }

    /// The body of become-current. Unknown fields are errors.
    public static func decodeDraft(_ o: JSONObject, extraFields: Set<String> = []) throws(ValidationError) -> ActivityDraft {
        var r = JSONFieldReader(o)
        for f in extraFields { _ = r.has(f) }
        var probe = Activity(id: ActivityID.random(), activityType: try r.requiredString("activityType"),
                             createdAt: Timestamp(seconds: 0), origin: DeviceRef(name: ""))
        try readContent(&r, into: &probe)
        try r.rejectUnknownFields()
        var d = ActivityDraft(activityType: probe.activityType)
        d.title = probe.title
        d.userInfo = probe.userInfo
        d.requiredUserInfoKeys = probe.requiredUserInfoKeys
        d.searchableUserInfoKeys = probe.searchableUserInfoKeys
        d.webpageURL = probe.webpageURL
        d.expirationDate = probe.expirationDate
        d.keywords = probe.keywords
        d.eligibleForHandoff = probe.eligibleForHandoff
        d.eligibleForSearch = probe.eligibleForSearch
        d.eligibleForPublicIndexing = probe.eligibleForPublicIndexing
        d.supportsContinuationStreams = probe.supportsContinuationStreams
        d.needsSave = probe.needsSave
        d.referrerURL = probe.referrerURL
        d.persistentIdentifier = probe.persistentIdentifier
        d.targetContentIdentifier = probe.targetContentIdentifier
        d.eligibleForPrediction = probe.eligibleForPrediction
        d.contentDescription = probe.contentDescription
        d.displayName = probe.displayName
        d.thumbnail = probe.thumbnail
        return d
    }

    static func readContent(_ r: inout JSONFieldReader, into a: inout Activity) throws(ValidationError) {
        if let t = try r.string("title") { a.title = t }
        if let info = try r.object("userInfo") { a.userInfo = try TypedJSON.decode(dictionary: info, path: "userInfo") }
        if let keys = try r.strings("requiredUserInfoKeys") { a.requiredUserInfoKeys = Array(Set(keys)).sorted() }
        if let keys = try r.strings("searchableUserInfoKeys") { a.searchableUserInfoKeys = Array(Set(keys)).sorted() }
        a.webpageURL = try r.string("webpageURL")
        a.expirationDate = try r.timestamp("expirationDate")
        if let k = try r.strings("keywords") { a.keywords = k }
        if let b = try r.bool("eligibleForHandoff") { a.eligibleForHandoff = b }
        if let b = try r.bool("eligibleForSearch") { a.eligibleForSearch = b }
        if let b = try r.bool("eligibleForPublicIndexing") { a.eligibleForPublicIndexing = b }
        if let b = try r.bool("supportsContinuationStreams") { a.supportsContinuationStreams = b }
        if let b = try r.bool("needsSave") { a.needsSave = b }
        a.referrerURL = try r.string("referrerURL")
        a.persistentIdentifier = try r.string("persistentIdentifier")
        a.targetContentIdentifier = try r.string("targetContentIdentifier")
        if let b = try r.bool("eligibleForPrediction") { a.eligibleForPrediction = b }
        a.contentDescription = try r.string("contentDescription")
        a.displayName = try r.string("displayName")
        a.thumbnail = try thumbnail(&r)
    }

    /// `thumbnail`: the image's bytes in base64.
    static func thumbnail(_ r: inout JSONFieldReader) throws(ValidationError) -> [UInt8]? {
        guard let text = try r.string("thumbnail") else { return nil }
        guard let bytes = Base64.decode(text) else { throw ValidationError(field: "thumbnail", problem: "is not base64") }
        return bytes
    }

    /// The body of an update. Unknown fields are errors; `null` clears webpageURL and expirationDate.
    public static func decodeUpdate(_ o: JSONObject) throws(ValidationError) -> ActivityUpdate {
        var r = JSONFieldReader(o)
        var u = ActivityUpdate()
        u.title = try r.string("title")
        if let info = try r.object("userInfo") { u.userInfo = try TypedJSON.decode(dictionary: info, path: "userInfo") }
        if let mode = try r.string("userInfoMode") {
            guard let m = ActivityUpdate.UserInfoMode(rawValue: mode) else {
                throw ValidationError(field: "userInfoMode", problem: "must be \"merge\" or \"replace\", not \"\(mode)\"")
            }
            u.userInfoMode = m
        }
        if u.userInfoMode == .replace && u.userInfo == nil { u.userInfo = [:] }
        u.removeUserInfoKeys = try r.strings("removeUserInfoKeys") ?? []
        u.requiredUserInfoKeys = try r.strings("requiredUserInfoKeys")
        u.searchableUserInfoKeys = try r.strings("searchableUserInfoKeys")
        if r.has("webpageURL") { u.webpageURL = .some(try r.string("webpageURL")) }
        if r.has("expirationDate") { u.expirationDate = .some(try r.timestamp("expirationDate")) }
        u.keywords = try r.strings("keywords")
        u.eligibleForHandoff = try r.bool("eligibleForHandoff")
        u.eligibleForSearch = try r.bool("eligibleForSearch")
        u.eligibleForPublicIndexing = try r.bool("eligibleForPublicIndexing")
        u.supportsContinuationStreams = try r.bool("supportsContinuationStreams")
        u.needsSave = try r.bool("needsSave")
        if r.has("referrerURL") { u.referrerURL = .some(try r.string("referrerURL")) }
        if r.has("persistentIdentifier") { u.persistentIdentifier = .some(try r.string("persistentIdentifier")) }
        if r.has("targetContentIdentifier") { u.targetContentIdentifier = .some(try r.string("targetContentIdentifier")) }
        u.eligibleForPrediction = try r.bool("eligibleForPrediction")
        if r.has("contentDescription") { u.contentDescription = .some(try r.string("contentDescription")) }
        if r.has("displayName") { u.displayName = .some(try r.string("displayName")) }
        if r.has("thumbnail") { u.thumbnail = .some(try thumbnail(&r)) }
        try r.rejectUnknownFields()
        return u
    }

    public static func encode(_ u: ActivityUpdate) -> JSONObject {
        var o = JSONObject()
        if let t = u.title { o["title"] = .string(t) }
        if let info = u.userInfo { o["userInfo"] = .object(TypedJSON.encode(dictionary: info)) }
        if u.userInfo != nil || u.userInfoMode == .replace { o["userInfoMode"] = .string(u.userInfoMode.rawValue) }
        if !u.removeUserInfoKeys.isEmpty { o["removeUserInfoKeys"] = .array(u.removeUserInfoKeys.map(JSONValue.string)) }
        if let k = u.requiredUserInfoKeys { o["requiredUserInfoKeys"] = .array(k.map(JSONValue.string)) }
        if let k = u.searchableUserInfoKeys { o["searchableUserInfoKeys"] = .array(k.map(JSONValue.string)) }
        if let w = u.webpageURL { o["webpageURL"] = w.map(JSONValue.string) ?? .null }
        if let e = u.expirationDate { o["expirationDate"] = e.map { .string($0.rfc3339) } ?? .null }
        if let k = u.keywords { o["keywords"] = .array(k.map(JSONValue.string)) }
        if let b = u.eligibleForHandoff { o["eligibleForHandoff"] = .bool(b) }
        if let b = u.eligibleForSearch { o["eligibleForSearch"] = .bool(b) }
        if let b = u.eligibleForPublicIndexing { o["eligibleForPublicIndexing"] = .bool(b) }
        if let b = u.supportsContinuationStreams { o["supportsContinuationStreams"] = .bool(b) }
        if let b = u.needsSave { o["needsSave"] = .bool(b) }
        if let v = u.referrerURL { o["referrerURL"] = v.map(JSONValue.string) ?? .null }
        if let v = u.persistentIdentifier { o["persistentIdentifier"] = v.map(JSONValue.string) ?? .null }
        if let v = u.targetContentIdentifier { o["targetContentIdentifier"] = v.map(JSONValue.string) ?? .null }
        if let b = u.eligibleForPrediction { o["eligibleForPrediction"] = .bool(b) }
        if let v = u.contentDescription { o["contentDescription"] = v.map(JSONValue.string) ?? .null }
        if let v = u.displayName { o["displayName"] = v.map(JSONValue.string) ?? .null }
        if let v = u.thumbnail { o["thumbnail"] = v.map { .string(Base64.encode($0)) } ?? .null }
        return o
    }

    public static func encode(_ d: ActivityDraft) -> JSONObject {
        var o = JSONObject()
        o["activityType"] = .string(d.activityType)
        if !d.title.isEmpty { o["title"] = .string(d.title) }
        if !d.userInfo.isEmpty { o["userInfo"] = .object(TypedJSON.encode(dictionary: d.userInfo)) }
        if !d.requiredUserInfoKeys.isEmpty { o["requiredUserInfoKeys"] = .array(d.requiredUserInfoKeys.map(JSONValue.string)) }
        if !d.searchableUserInfoKeys.isEmpty { o["searchableUserInfoKeys"] = .array(d.searchableUserInfoKeys.map(JSONValue.string)) }
        if let w = d.webpageURL { o["webpageURL"] = .string(w) }
        if let e = d.expirationDate { o["expirationDate"] = .string(e.rfc3339) }
        if !d.keywords.isEmpty { o["keywords"] = .array(d.keywords.map(JSONValue.string)) }
        if !d.eligibleForHandoff { o["eligibleForHandoff"] = .bool(false) }
        if d.eligibleForSearch { o["eligibleForSearch"] = .bool(true) }
        if d.eligibleForPublicIndexing { o["eligibleForPublicIndexing"] = .bool(true) }
        if d.supportsContinuationStreams { o["supportsContinuationStreams"] = .bool(true) }
        if d.needsSave { o["needsSave"] = .bool(true) }
        if let v = d.referrerURL { o["referrerURL"] = .string(v) }
        if let v = d.persistentIdentifier { o["persistentIdentifier"] = .string(v) }
        if let v = d.targetContentIdentifier { o["targetContentIdentifier"] = .string(v) }
        if d.eligibleForPrediction { o["eligibleForPrediction"] = .bool(true) }
        if let v = d.contentDescription { o["contentDescription"] = .string(v) }
        if let v = d.displayName { o["displayName"] = .string(v) }
        if let v = d.thumbnail { o["thumbnail"] = .string(Base64.encode(v)) }
        return o
    }
}
