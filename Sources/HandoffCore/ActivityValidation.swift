/// Checks an activity against the model's rules and the limits; errors name the field.
public enum ActivityValidation {
    public static func validate(_ a: Activity, limits: ActivityLimits) throws(ValidationError) {
        try validateType(a.activityType, limits: limits)
        guard a.title.count <= limits.maximumTitleLength else {
            throw ValidationError(field: "title", problem: "longer than \(limits.maximumTitleLength) characters")
        }
        if let url = a.webpageURL { try validateWebpageURL(url, limits: limits) }
        if let url = a.referrerURL { try validateWebpageURL(url, limits: limits, field: "referrerURL") }
        for (field, id) in [("persistentIdentifier", a.persistentIdentifier), ("targetContentIdentifier", a.targetContentIdentifier)] {
            guard let id else { continue }
            guard SearchFields.isPersistentIdentifier(id) else {
                throw ValidationError(field: field, problem: "must be 1 to \(limits.maximumIdentifierLength) bytes without control characters")
            }
        }
        if let d = a.contentDescription, d.count > limits.maximumDescriptionLength {
            throw ValidationError(field: "contentDescription", problem: "longer than \(limits.maximumDescriptionLength) characters")
        }
        if let n = a.displayName, n.count > limits.maximumTitleLength {
            throw ValidationError(field: "displayName", problem: "longer than \(limits.maximumTitleLength) characters")
        }
        if let t = a.thumbnail {
            guard t.count <= limits.maximumThumbnailBytes else {
                throw ValidationError(field: "thumbnail", problem: "\(t.count) bytes, more than \(limits.maximumThumbnailBytes); make it smaller (a thumbnail, not the picture)")
            }
            guard Thumbnail.isImage(t) else {
                throw ValidationError(field: "thumbnail", problem: "must be a PNG or JPEG image")
            }
        }
        for (field, t) in [("createdAt", a.createdAt), ("updatedAt", a.updatedAt)] + (a.expirationDate.map { [("expirationDate", $0)] } ?? [])
        where !t.isRepresentable {
            throw ValidationError(field: field, problem: "dates must lie in the years 0000 to 9999")
        }
        guard a.keywords.count <= limits.maximumKeywords else {
            throw ValidationError(field: "keywords", problem: "more than \(limits.maximumKeywords) keywords")
        }
        for (n, k) in a.keywords.enumerated() where k.isEmpty || k.count > limits.maximumKeywordLength {
            throw ValidationError(field: "keywords[\(n)]", problem: "must be 1 to \(limits.maximumKeywordLength) characters")
        }
        for (n, k) in a.requiredUserInfoKeys.enumerated() where k.isEmpty {
            throw ValidationError(field: "requiredUserInfoKeys[\(n)]", problem: "must not be empty")
        }
        guard a.searchableUserInfoKeys.count <= limits.maximumKeywords else {
            throw ValidationError(field: "searchableUserInfoKeys", problem: "more than \(limits.maximumKeywords) keys")
        }
        for (n, k) in a.searchableUserInfoKeys.enumerated() where k.isEmpty {
            throw ValidationError(field: "searchableUserInfoKeys[\(n)]", problem: "must not be empty")
        }
        for key in a.userInfo.keys.sorted() {
            try validateValue(a.userInfo[key]!, path: "userInfo.\(key)", key: key, depth: 1, limits: limits)
        }
        let size = ActivityPropertyList.encodedSize(of: a)
        guard size <= limits.maximumEncodedBytes else {
            throw ValidationError(
                field: "activity",
                problem: "encoded size \(size) bytes exceeds the \(limits.maximumEncodedBytes)-byte cap; keep the payload small (3 KB or less is best) and send bulk data through a continuation stream")
        }
    }

    /// Reverse-DNS: two or more dot-separated labels of letters, digits and hyphens.
    public static func validateType(_ type: String, limits: ActivityLimits = ActivityLimits()) throws(ValidationError) {
        guard !type.isEmpty else { throw ValidationError(field: "activityType", problem: "is required") }
        guard type.utf8.count <= limits.maximumTypeLength else {
            throw ValidationError(field: "activityType", problem: "longer than \(limits.maximumTypeLength) characters")
        }
        let labels = type.split(separator: ".", omittingEmptySubsequences: false)
        let ok = labels.count >= 2 && labels.allSatisfy { label in
            !label.isEmpty && label.utf8.allSatisfy { c in
                (48...57).contains(c) || (65...90).contains(c) || (97...122).contains(c) || c == UInt8(ascii: "-")
            }
        }
        guard ok else {
            throw ValidationError(
                field: "activityType",
                problem: "\"\(type)\" is not reverse-DNS: use two or more dot-separated labels of letters, digits and hyphens, e.g. com.example.editor.edit-note")
        }
    }

    public static func validateWebpageURL(_ url: String, limits: ActivityLimits = ActivityLimits(), field: String = "webpageURL") throws(ValidationError) {
        guard url.utf8.count <= limits.maximumURLLength else {
            throw ValidationError(field: field, problem: "longer than \(limits.maximumURLLength) bytes")
        }
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") { rest = url.dropFirst(8) }
        else if lower.hasPrefix("http://") { rest = url.dropFirst(7) }
        else {
            throw ValidationError(field: field, problem: "\"\(url)\" must be an http or https URL")
        }
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty else {
            throw ValidationError(field: field, problem: "\"\(url)\" has no host")
        }
        guard !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw ValidationError(field: field, problem: "must not contain spaces or control characters")
        }
    }

    static func validateValue(_ v: PropertyValue, path: String, key: String, depth: Int, limits: ActivityLimits) throws(ValidationError) {
        guard depth <= limits.maximumNesting else {
            throw ValidationError(field: path, problem: "nested deeper than \(limits.maximumNesting) levels")
        }
        switch v {
        case .double(let d):
            guard d.isFinite else { throw ValidationError(field: path, problem: "doubles must be finite (no NaN or infinity)") }
        case .date(let t):
            guard t.isRepresentable else { throw ValidationError(field: path, problem: "dates must lie in the years 0000 to 9999") }
        case .url(let u):
            guard let colon = u.firstIndex(of: ":"), colon != u.startIndex,
                  u[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
                  u.first!.isLetter
            else { throw ValidationError(field: path, problem: "\"\(u)\" is not an absolute URL (scheme:...)") }
        case .array(let items):
            for (n, item) in items.enumerated() {
                try validateValue(item, path: "\(path)[\(n)]", key: key, depth: depth + 1, limits: limits)
            }
        case .set(let items):
            var seen = Set<PropertyValue>()
            for (n, item) in items.enumerated() {
                try validateValue(item, path: "\(path)[\(n)]", key: key, depth: depth + 1, limits: limits)
                guard seen.insert(item).inserted else {
                    throw ValidationError(field: "\(path)[\(n)]", problem: "a set holds each element once; this one is repeated")
                }
            }
        case .dictionary(let dict):
            for k in dict.keys.sorted() {
                try validateValue(dict[k]!, path: "\(path).\(k)", key: key, depth: depth + 1, limits: limits)
            }
        case .string, .integer, .boolean, .data, .null:
            break
        }
    }
}
