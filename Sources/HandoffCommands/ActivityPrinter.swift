import HandoffCore
import HandoffControlAPI

/// Activities as people read them.
enum ActivityPrinter {
    static func summary(_ r: ActivityRecord) -> String {
        let a = r.activity
        let title = a.title.isEmpty ? "" : " \"\(a.title)\""
        return "\(a.activityType)\(title) [\(r.state.rawValue)] \(a.id)"
    }

    /// `names`: device names by ID, for `to`.
    static func details(_ r: ActivityRecord, names: [String: String] = [:]) -> String {
        let a = r.activity
        var lines: [(String, String)] = [
            ("type", a.activityType),
            ("title", a.title.isEmpty ? "(none)" : a.title),
            ("id", a.id.rawValue),
            ("state", "\(r.state.rawValue), owned by \(r.owner)"),
            ("from", a.origin.name),
            ("updated", a.updatedAt.rfc3339),
        ]
        if let to = r.to, !to.isEmpty {
            lines.append(("to", to.map { names[$0] ?? String($0.prefix(7)) }.joined(separator: ", ") + " only"))
        }
        if let u = a.webpageURL { lines.append(("webpage", u)) }
        if let e = a.expirationDate { lines.append(("expires", e.rfc3339)) }
        if !a.keywords.isEmpty { lines.append(("keywords", a.keywords.joined(separator: ", "))) }
        if !a.requiredUserInfoKeys.isEmpty { lines.append(("required", a.requiredUserInfoKeys.joined(separator: ", "))) }
        if let u = a.referrerURL { lines.append(("referrer", u)) }
        if let s = a.persistentIdentifier { lines.append(("lasting", s)) }
        if let s = a.targetContentIdentifier { lines.append(("target", s)) }
        if let s = a.displayName { lines.append(("name", s)) }
        if let s = a.contentDescription { lines.append(("about", s)) }
        if let t = a.thumbnail { lines.append(("thumbnail", "\(Thumbnail.mediaType(t) ?? "image"), \(t.count) bytes")) }
        var flags: [String] = []
        if !a.eligibleForHandoff { flags.append("not offered for handoff") }
        if a.eligibleForSearch { flags.append("searchable") }
        if a.eligibleForPublicIndexing { flags.append("public indexing") }
        if a.eligibleForPrediction { flags.append("prediction") }
        if a.supportsContinuationStreams { flags.append("continuation streams") }
        if a.needsSave { flags.append("needs save") }
        if r.stale == true { flags.append("STALE: the owner did not refresh it in time") }
        if !flags.isEmpty { lines.append(("flags", flags.joined(separator: ", "))) }
        lines.append(("payload", "\(r.payloadSize) bytes"))
        var out = lines.map { pad($0.0 + ":", 10) + $0.1 }.joined(separator: "\n")
        if a.userInfo.isEmpty {
            out += "\n" + pad("userInfo:", 10) + "(empty)"
        } else {
            out += "\nuserInfo:"
            for key in a.userInfo.keys.sorted() {
                out += "\n  \(key) = \(TypedJSON.encode(a.userInfo[key]!).serialized())"
            }
        }
        return out
    }

    static func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count)
    }
}
