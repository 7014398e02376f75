
/// What a workstation tells its trusted peers about its current activity: enough to list
/// and choose it, never its userInfo (that is fetched only when the user continues).
public struct ActivitySummary: Sendable, Equatable {
    public var id: ActivityID
    public var activityType: String
    public var title: String
    public var originName: String
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    public var expirationDate: Timestamp?
    public var webpageURL: String?
    public var supportsContinuationStreams: Bool
    public var needsSave: Bool
    public var payloadSize: Int
    /// Only for activities eligible for search: what the history may index.
    public var search: SearchFields?

    public init(_ a: Activity, payloadSize: Int) {
        id = a.id
        activityType = a.activityType
        title = a.title
        originName = a.origin.name
        createdAt = a.createdAt
        updatedAt = a.updatedAt
        expirationDate = a.expirationDate
        webpageURL = a.webpageURL
        supportsContinuationStreams = a.supportsContinuationStreams
        needsSave = a.needsSave
        self.payloadSize = payloadSize
        search = SearchFields(a)
    }

    public var propertyList: PropertyValue {
        var d: [String: PropertyValue] = [
            "id": .string(id.rawValue), "activityType": .string(activityType), "title": .string(title),
            "originName": .string(originName), "createdAt": .date(createdAt), "updatedAt": .date(updatedAt),
            "supportsContinuationStreams": .boolean(supportsContinuationStreams), "needsSave": .boolean(needsSave),
            "payloadSize": .integer(Int64(payloadSize)),
        ]
        if let e = expirationDate { d["expirationDate"] = .date(e) }
        if let w = webpageURL { d["webpageURL"] = .url(w) }
        if let search { d["search"] = search.propertyList }
        return .dictionary(d)
    }

    public init(propertyList value: PropertyValue) throws(ValidationError) {
        guard case .dictionary(let d) = value else { throw ValidationError(field: "summary", problem: "is not a dictionary") }
        func string(_ k: String) throws(ValidationError) -> String {
            guard case .string(let s)? = d[k] else { throw ValidationError(field: "summary.\(k)", problem: "missing or not a string") }
            return s
        }
        func date(_ k: String) throws(ValidationError) -> Timestamp {
            guard case .date(let t)? = d[k] else { throw ValidationError(field: "summary.\(k)", problem: "missing or not a date") }
            return t
        }
        func bool(_ k: String) throws(ValidationError) -> Bool {
            guard case .boolean(let b)? = d[k] else { throw ValidationError(field: "summary.\(k)", problem: "missing or not a boolean") }
            return b
        }
        guard let id = ActivityID(try string("id")) else { throw ValidationError(field: "summary.id", problem: "is not an activity id") }
        guard case .integer(let size)? = d["payloadSize"], size >= 0 else {
            throw ValidationError(field: "summary.payloadSize", problem: "missing or negative")
        }
        self.id = id
        activityType = try string("activityType")
        try ActivityValidation.validateType(activityType)
        title = try string("title")
        originName = try string("originName")
        createdAt = try date("createdAt")
        updatedAt = try date("updatedAt")
        expirationDate = d["expirationDate"] == nil ? nil : try date("expirationDate")
        if let w = d["webpageURL"] {
            guard case .url(let u) = w else { throw ValidationError(field: "summary.webpageURL", problem: "is not a URL") }
            try ActivityValidation.validateWebpageURL(u)
            webpageURL = u
        }
        supportsContinuationStreams = try bool("supportsContinuationStreams")
        needsSave = try bool("needsSave")
        payloadSize = Int(size)
        // Optional: older peers do not send it.
        search = try d["search"].map { v throws(ValidationError) in try SearchFields(propertyList: v) }
    }

    public var json: JSONObject {
        [
            "id": .string(id.rawValue), "activityType": .string(activityType), "title": .string(title),
            "originName": .string(originName), "createdAt": .string(createdAt.rfc3339), "updatedAt": .string(updatedAt.rfc3339),
            "expirationDate": expirationDate.map { .string($0.rfc3339) } ?? .null,
            "webpageURL": webpageURL.map(JSONValue.string) ?? .null,
            "supportsContinuationStreams": .bool(supportsContinuationStreams), "needsSave": .bool(needsSave),
            "payloadSize": .integer(Int64(payloadSize)),
            "search": search.map { .object($0.json) } ?? .null,
        ]
    }

    public init(json o: JSONObject) throws(ValidationError) {
        var r = JSONFieldReader(o)
        guard let id = ActivityID(try r.requiredString("id")) else { throw ValidationError(field: "id", problem: "is not an activity id") }
        self.id = id
        activityType = try r.requiredString("activityType")
        title = try r.string("title") ?? ""
        originName = try r.string("originName") ?? ""
        createdAt = try r.timestamp("createdAt") ?? Timestamp(seconds: 0)
        updatedAt = try r.timestamp("updatedAt") ?? createdAt
        expirationDate = try r.timestamp("expirationDate")
        webpageURL = try r.string("webpageURL")
        supportsContinuationStreams = try r.bool("supportsContinuationStreams") ?? false
        needsSave = try r.bool("needsSave") ?? false
        payloadSize = Int(try r.integer("payloadSize") ?? 0)
        if let s = try r.object("search") { search = try SearchFields(json: s) }
    }
}
