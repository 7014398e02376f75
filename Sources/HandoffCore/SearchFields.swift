
/// What the history may index of an activity whose app allows it (`eligibleForSearch`):
/// its keywords, its display name and content description, the values of the userInfo
/// keys the app opted in (`searchableUserInfoKeys`) as text, and the document it refers to. Travels in the offer summary so that each
/// workstation's history can find what the others offered; nothing else of userInfo does.
public struct SearchFields: Sendable, Equatable {
    public var keywords: [String]
    public var text: String
    /// The document's path inside its synced folder, with the folder's reference.
    public var document: DocumentReference?
    /// The activity's `persistentIdentifier`: what its origin later deletes it from the
    /// histories by.
    public var persistentIdentifier: String?

    /// At most this much text crosses the wire per offer.
    public static let maximumTextBytes = 2048

    public init(keywords: [String], text: String, document: DocumentReference?) {
        self.keywords = keywords
        self.text = text
        self.document = document
    }

    /// nil unless the activity is eligible for search.
    public init?(_ a: Activity) {
        guard a.eligibleForSearch else { return nil }
        keywords = a.keywords
        // The search attributes first: what the app says the content is called and is.
        var parts = [a.displayName, a.contentDescription].compactMap { $0 }.filter { !$0.isEmpty }
        for key in a.searchableUserInfoKeys {
            if let v = a.userInfo[key] { parts.append(contentsOf: SearchFields.words(v)) }
        }
        text = SearchFields.cut(parts.joined(separator: " "))
        document = a.userInfo[DocumentReference.userInfoKey].flatMap { try? DocumentReference(propertyValue: $0) }
        persistentIdentifier = a.persistentIdentifier
    }

    /// Text values of an opted-in entry: strings, numbers and URLs, in arrays and
    /// dictionaries too; dates and data are not words.
    static func words(_ v: PropertyValue) -> [String] {
        switch v {
        case .string(let s), .url(let s): [s]
        case .integer(let i): [String(i)]
        case .double(let d): [String(d)]
        case .array(let items): items.flatMap(words)
        case .dictionary(let d): d.keys.sorted().flatMap { words(d[$0]!) }
        default: []
        }
    }

    static func cut(_ s: String) -> String {
        guard s.utf8.count > maximumTextBytes else { return s }
        var out = ""
        for ch in s {
            if out.utf8.count + ch.utf8.count > maximumTextBytes { break }
            out.append(ch)
        }
        return out
    }

    public var propertyList: PropertyValue {
        var d: [String: PropertyValue] = ["keywords": .array(keywords.map(PropertyValue.string)), "text": .string(text)]
        if let document { d["document"] = document.propertyValue }
        if let persistentIdentifier { d["persistentIdentifier"] = .string(persistentIdentifier) }
        return .dictionary(d)
    }

    public init(propertyList value: PropertyValue) throws(ValidationError) {
        guard case .dictionary(let d) = value else { throw ValidationError(field: "summary.search", problem: "is not a dictionary") }
        var keywords: [String] = []
        if case .array(let items)? = d["keywords"] {
            for item in items.prefix(ActivityLimits().maximumKeywords) {
                guard case .string(let s) = item, !s.isEmpty, s.count <= ActivityLimits().maximumKeywordLength else {
                    throw ValidationError(field: "summary.search.keywords", problem: "must be strings of 1 to \(ActivityLimits().maximumKeywordLength) characters")
                }
                keywords.append(s)
            }
        }
        guard case .string(let text)? = d["text"] ?? .string(""), text.utf8.count <= SearchFields.maximumTextBytes else {
            throw ValidationError(field: "summary.search.text", problem: "missing, not a string or over \(SearchFields.maximumTextBytes) bytes")
        }
        self.keywords = keywords
        self.text = text
        document = try d["document"].map { v throws(ValidationError) in try DocumentReference(propertyValue: v) }
        if let v = d["persistentIdentifier"] {
            guard case .string(let s) = v, SearchFields.isPersistentIdentifier(s) else {
                throw ValidationError(field: "summary.search.persistentIdentifier", problem: "must be 1 to 256 bytes without control characters")
            }
            persistentIdentifier = s
        }
    }

    /// 1 to 256 bytes, no control characters (as `ActivityValidation` checks an activity's).
    public static func isPersistentIdentifier(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= ActivityLimits().maximumIdentifierLength
            && !s.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// The document in typed JSON, as in userInfo (Docs/LocalAPI.md §5).
    public var json: JSONObject {
        ["keywords": .array(keywords.map(JSONValue.string)), "text": .string(text),
         "document": document.map { TypedJSON.encode($0.propertyValue) } ?? .null,
         "persistentIdentifier": persistentIdentifier.map(JSONValue.string) ?? .null]
    }

    public init(json o: JSONObject) throws(ValidationError) {
        var r = JSONFieldReader(o, path: "search")
        keywords = try r.strings("keywords") ?? []
        text = try r.string("text") ?? ""
        if let d = o["document"], d != .null {
            document = try DocumentReference(propertyValue: try TypedJSON.decode(d, path: "search.document"))
        } else {
            document = nil
        }
        persistentIdentifier = try r.string("persistentIdentifier")
    }
}
