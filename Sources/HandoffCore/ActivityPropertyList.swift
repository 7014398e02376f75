/// An activity as one property-list dictionary: the form that crosses the wire in binary
/// (and whose size the payload cap measures). Keys match the JSON field names.
public enum ActivityPropertyList {
    public static func encode(_ a: Activity) -> PropertyValue {
        var d: [String: PropertyValue] = [
            "id": .string(a.id.rawValue),
            "activityType": .string(a.activityType),
            "title": .string(a.title),
            "userInfo": .dictionary(a.userInfo),
            "requiredUserInfoKeys": .array(a.requiredUserInfoKeys.map(PropertyValue.string)),
            "keywords": .array(a.keywords.map(PropertyValue.string)),
            "eligibleForHandoff": .boolean(a.eligibleForHandoff),
            "eligibleForSearch": .boolean(a.eligibleForSearch),
            "eligibleForPublicIndexing": .boolean(a.eligibleForPublicIndexing),
            "supportsContinuationStreams": .boolean(a.supportsContinuationStreams),
            "needsSave": .boolean(a.needsSave),
            "createdAt": .date(a.createdAt),
            "updatedAt": .date(a.updatedAt),
            "originName": .string(a.origin.name),
        ]
        if !a.searchableUserInfoKeys.isEmpty { d["searchableUserInfoKeys"] = .array(a.searchableUserInfoKeys.map(PropertyValue.string)) }
        if let u = a.webpageURL { d["webpageURL"] = .url(u) }
        if let e = a.expirationDate { d["expirationDate"] = .date(e) }
        if let id = a.origin.id { d["originID"] = .string(id) }
        if let u = a.referrerURL { d["referrerURL"] = .url(u) }
        if let s = a.persistentIdentifier { d["persistentIdentifier"] = .string(s) }
        if let s = a.targetContentIdentifier { d["targetContentIdentifier"] = .string(s) }
        if a.eligibleForPrediction { d["eligibleForPrediction"] = .boolean(true) }
        if let s = a.contentDescription { d["contentDescription"] = .string(s) }
        if let s = a.displayName { d["displayName"] = .string(s) }
        if let t = a.thumbnail { d["thumbnail"] = .data(t) }
        return .dictionary(d)
    }

    public static func encodedSize(of a: Activity) -> Int {
        PropertyBinaryEncoding.encode(encode(a)).count
    }

    public static func decode(_ value: PropertyValue) throws(ValidationError) -> Activity {
        guard case .dictionary(let d) = value else { throw ValidationError(field: "activity", problem: "is not a dictionary") }
        func string(_ k: String) throws(ValidationError) -> String {
            guard case .string(let s)? = d[k] else { throw ValidationError(field: k, problem: "missing or not a string") }
            return s
        }
        func bool(_ k: String) throws(ValidationError) -> Bool {
            guard case .boolean(let b)? = d[k] else { throw ValidationError(field: k, problem: "missing or not a boolean") }
            return b
        }
        func date(_ k: String) throws(ValidationError) -> Timestamp {
            guard case .date(let t)? = d[k] else { throw ValidationError(field: k, problem: "missing or not a date") }
            return t
        }
        func strings(_ k: String) throws(ValidationError) -> [String] {
            guard case .array(let items)? = d[k] else { throw ValidationError(field: k, problem: "missing or not an array") }
            var out: [String] = []
            for item in items {
                guard case .string(let s) = item else { throw ValidationError(field: k, problem: "holds a non-string") }
                out.append(s)
            }
            return out
        }
        guard let id = ActivityID(try string("id")) else { throw ValidationError(field: "id", problem: "is not an activity id") }
        guard case .dictionary(let info)? = d["userInfo"] else { throw ValidationError(field: "userInfo", problem: "missing or not a dictionary") }
        var webpageURL: String?
        if let v = d["webpageURL"] {
            guard case .url(let u) = v else { throw ValidationError(field: "webpageURL", problem: "is not a URL") }
            webpageURL = u
        }
        let expiration: Timestamp? = d["expirationDate"] == nil ? nil : try date("expirationDate")
        let originID: String? = d["originID"] == nil ? nil : try string("originID")
        var a = Activity(
            id: id, activityType: try string("activityType"), title: try string("title"), userInfo: info,
            requiredUserInfoKeys: try strings("requiredUserInfoKeys"), webpageURL: webpageURL,
            expirationDate: expiration, keywords: try strings("keywords"),
            eligibleForHandoff: try bool("eligibleForHandoff"), eligibleForSearch: try bool("eligibleForSearch"),
            eligibleForPublicIndexing: try bool("eligibleForPublicIndexing"),
            supportsContinuationStreams: try bool("supportsContinuationStreams"), needsSave: try bool("needsSave"),
            createdAt: try date("createdAt"), updatedAt: try date("updatedAt"),
            origin: DeviceRef(name: try string("originName"), id: originID))
        // Optional: older peers do not send it.
        if d["searchableUserInfoKeys"] != nil { a.searchableUserInfoKeys = try strings("searchableUserInfoKeys") }
        func optionalString(_ k: String) throws(ValidationError) -> String? { d[k] == nil ? nil : try string(k) }
        if let v = d["referrerURL"] {
            guard case .url(let u) = v else { throw ValidationError(field: "referrerURL", problem: "is not a URL") }
            a.referrerURL = u
        }
        a.persistentIdentifier = try optionalString("persistentIdentifier")
        a.targetContentIdentifier = try optionalString("targetContentIdentifier")
        if d["eligibleForPrediction"] != nil { a.eligibleForPrediction = try bool("eligibleForPrediction") }
        a.contentDescription = try optionalString("contentDescription")
        a.displayName = try optionalString("displayName")
        if let v = d["thumbnail"] {
            guard case .data(let t) = v else { throw ValidationError(field: "thumbnail", problem: "is not data") }
            a.thumbnail = t
        }
        return a
    }
}
