import HandoffCore

/// An installed app as continuing sees it: a desktop entry, and what it declares with
/// `X-Handoff-ActivityTypes` and `X-Handoff-Domains` (Docs/Apps.md).
public struct DesktopHandler: Sendable, Equatable {
    /// The desktop id: `org.example.Editor.desktop`.
    public var id: String
    public var name: String
    /// A GIcon string (a theme icon name or a path), for notifications.
    public var icon: String?
    public var activityTypes: [String]
    public var domains: [DomainClaim]
    /// From the user's own applications folder ($XDG_DATA_HOME): preferred over the system's.
    public var isUserEntry: Bool
    /// The program its Exec runs.
    public var executable: String?

    public init(id: String, name: String, icon: String? = nil, activityTypes: [String] = [], domains: [DomainClaim] = [], isUserEntry: Bool = false,
                executable: String? = nil) {
        self.executable = executable
        self.id = id
        self.name = name
        self.icon = icon
        self.activityTypes = activityTypes
        self.domains = domains
        self.isUserEntry = isUserEntry
    }
}

/// A web domain an app claims, so that web pages there open in it rather than in the
/// browser: `example.org` is that host only, `*.example.org` is it and every subdomain.
public struct DomainClaim: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let includesSubdomains: Bool

    /// Nil for anything that is not a plain DNS name (or one behind `*.`).
    public init?(_ text: String) {
        var t = text.lowercased()
        includesSubdomains = t.hasPrefix("*.")
        if includesSubdomains { t.removeFirst(2) }
        let labels = t.split(separator: ".", omittingEmptySubsequences: false)
        guard t.count <= 253, labels.count >= 2, labels.allSatisfy({ label in
            !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
                && label.allSatisfy { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "-" }
        }) else { return nil }
        host = t
    }

    public func matches(host other: String) -> Bool {
        let h = other.lowercased()
        return h == host || (includesSubdomains && h.hasSuffix("." + host))
    }

    public var description: String { includesSubdomains ? "*." + host : host }
}

/// Reading the `X-Handoff-*` keys: `;`-separated lists, as desktop entries write them.
/// What does not parse is set aside (and reported), never half-used.
public enum HandlerDeclaration {
    public static func activityTypes(_ value: String?) -> (valid: [String], rejected: [String]) {
        var valid: [String] = [], rejected: [String] = []
        for item in list(value) {
            do {
                try ActivityValidation.validateType(item)
                if !valid.contains(item) { valid.append(item) }
            } catch {
                rejected.append(item)
            }
        }
        return (valid, rejected)
    }

    public static func domains(_ value: String?) -> (valid: [DomainClaim], rejected: [String]) {
        var valid: [DomainClaim] = [], rejected: [String] = []
        for item in list(value) {
            if let d = DomainClaim(item) { if !valid.contains(d) { valid.append(d) } } else { rejected.append(item) }
        }
        return (valid, rejected)
    }

    static func list(_ value: String?) -> [String] {
        guard let value else { return [] }
        // A hostile entry may be huge: only the first few hundred items count.
        return value.split(separator: ";").prefix(256).map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
    }
}

extension String {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
