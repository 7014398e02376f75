import HandoffControlAPI
import HandoffCore

/// Search from the shell (GNOME Shell's search provider, KRunner): what a query finds
/// among the live offers, how a result is named for the shell and how its id reads back.
/// Pure; the history's part of an answer comes from handoffd (`POST /v1/history/search`).
/// Only what an activity marked eligible for search is ever found.
public enum ShellSearch {
    /// A query is at most this many words of at most this many characters: a shell may
    /// send anything (1,000 terms, 1 MB), the answer stays small and quick.
    public static let maximumTerms = 8
    public static let maximumTermLength = 64
    /// Results per source in one answer (GNOME Shell shows 5).
    public static let maximumResults = 10

    /// The words of a query, lowercased and bounded. A word is split on spaces as KRunner
    /// sends one string; an empty list finds nothing.
    public static func terms(_ raw: [String]) -> [String] {
        var out: [String] = []
        var looked = 0
        for t in raw {
            looked += 1
            if looked > maximumTerms * 4 || out.count >= maximumTerms { break }
            var word = ""
            var scanned = 0
            for c in t {
                scanned += 1
                // Within a word, a bounded look: the rest of a 1 MB term is not read.
                if scanned > maximumTermLength * (maximumTerms + 1) { break }
                if c.isWhitespace {
                    if !word.isEmpty { out.append(String(word.prefix(maximumTermLength))); word = "" }
                    if out.count >= maximumTerms { break }
                } else if !c.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .control }) {
                    // A letter under a thousand combining marks is one character: its base
                    // alone is kept, so a term stays small whatever it holds.
                    word += c.unicodeScalars.count > MenuText.maximumScalarsPerCharacter ? String(c.unicodeScalars.first!).lowercased() : c.lowercased()
                }
            }
            if !word.isEmpty && out.count < maximumTerms { out.append(String(word.prefix(maximumTermLength))) }
        }
        // A term that begins another asks nothing more of a match ("re" beside "report"):
        // it goes, and so do repeats, which would each cost the index a walk.
        var kept: [String] = []
        for t in out where !out.contains(where: { $0 != t && $0.hasPrefix(t) }) && !kept.contains(t) { kept.append(t) }
        return kept
    }

    /// What the history is asked: the terms of two letters or more (one letter begins
    /// most words: it narrows nothing and costs the index the most) with a letter or digit
    /// in them (the index has no other words: "--" would ask for everything); nil when
    /// none is left.
    public static func historyQuery(_ terms: [String]) -> String? {
        let useful = terms.filter { $0.count >= 2 && $0.contains { $0.isLetter || $0.isNumber } }
        return useful.isEmpty ? nil : useful.joined(separator: " ")
    }

    /// Whether every term begins a word of what the offer lets be searched: its title,
    /// keywords, opted-in text, its app's name and its workstation's name. Offers not
    /// eligible for search never match.
    public static func matches(_ o: Presence.Offer, _ terms: [String]) -> Bool {
        guard let search = o.activity.search, !terms.isEmpty else { return false }
        let words = Self.words([o.title, search.text, o.device.name, o.app?.name ?? ""] + search.keywords)
        return terms.allSatisfy { t in words.contains { $0.hasPrefix(t) } }
    }

    static func words(_ texts: [String]) -> [Substring] {
        var out: [Substring] = []
        for text in texts {
            let lower = text.lowercased()
            out += lower.split { !($0.isLetter || $0.isNumber) }
            // "example.org" is found as one word too.
            out += lower.split { $0.isWhitespace }
        }
        return out
    }

    /// The offers a query finds, newest first.
    public static func offers(_ p: Presence, _ terms: [String]) -> [Presence.Offer] {
        Array(p.offers.lazy.filter { matches($0, terms) }.prefix(maximumResults))
    }

    /// What a result id stands for: `offer/DEVICE/ACTIVITY` or `history/ENTRY`.
    public enum Result: Sendable, Equatable, Hashable {
        case offer(deviceID: String, activityID: String)
        case history(Int64)

        public var id: String {
            switch self {
            case .offer(let d, let a): "offer/\(d)/\(a)"
            case .history(let n): "history/\(n)"
            }
        }

        public init?(id: String) {
            guard id.utf8.count <= 256 else { return nil }
            let parts = id.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            switch (parts.first, parts.count) {
            case ("offer", 3) where !parts[1].isEmpty && ActivityID(parts[2]) != nil: self = .offer(deviceID: parts[1], activityID: parts[2])
            case ("history", 2): guard let n = Int64(parts[1]), n >= 0 else { return nil }; self = .history(n)
            default: return nil
            }
        }
    }

    /// How a result reads in the shell: a name, one line of description, an icon.
    public struct Meta: Sendable, Equatable {
        public var result: Result
        public var name: String
        public var description: String
        public var icon: String
    }

    public static func meta(_ o: Presence.Offer, at now: Timestamp) -> Meta {
        let device = MenuText.line(o.device.name.isEmpty ? "another workstation" : o.device.name, limit: 32)
        var description = "Continue from \(device), \(ago(o.offeredAt, now))"
        if o.kept { description += " (asleep, kept here)" }
        if let app = o.app { description += " in " + MenuText.line(app.name, limit: 32) }
        return Meta(result: .offer(deviceID: o.device.id, activityID: o.activity.id.rawValue), name: MenuText.line(o.title, limit: 80),
                    description: description, icon: o.app?.icon.map { MenuText.line($0, limit: 128) } ?? "handoff")
    }

    public static func meta(_ e: HistoryEntry, at now: Timestamp) -> Meta {
        let device = e.local ? "here" : "on " + MenuText.line(e.device.name.isEmpty ? "another workstation" : e.device.name, limit: 32)
        let what = e.webpageURL != nil ? "open its page again" : e.documentPath != nil ? "open the document again" : "in the history"
        return Meta(result: .history(e.id), name: MenuText.line(e.title.isEmpty ? e.activityType : e.title, limit: 80),
                    description: "Seen \(device) \(ago(e.lastSeen, now)): \(what)", icon: "document-open-recent")
    }

    /// "just now", "5 min ago", "3 h ago", "2 days ago".
    public static func ago(_ then: Timestamp, _ now: Timestamp) -> String {
        let s = max(0, then.nanoseconds(until: now) / 1_000_000_000)
        switch s {
        case ..<60: return "just now"
        case ..<3600: return "\(s / 60) min ago"
        case ..<86400: return "\(s / 3600) h ago"
        default:
            let d = s / 86400
            return d == 1 ? "yesterday" : "\(d) days ago"
        }
    }
}
