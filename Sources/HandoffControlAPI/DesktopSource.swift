import HandoffCore

/// A desktop source in the session agent (Docs/Desktop.md): `media` (MPRIS players),
/// `recent-documents` (recently-used.xbel), `browser` (the browser extension's host), and
/// `clipboard` (the desktop's clipboard, shared with the other workstations), and `tray`
/// (the icon in the panel, with its menu: it offers nothing, but is switched the same way). Listed and
/// switched through handoffd (`/v1/sources`), which asks the agent.
public struct DesktopSource: Sendable, Equatable {
    public static let names = ["media", "recent-documents", "browser", "clipboard", "tray"]

    public var name: String
    /// On in the agent's settings (and not turned off on its command line).
    public var enabled: Bool
    /// What it does now, for people: "following 2 players; offering “Song” (mpv)".
    public var detail: String
    /// When it is on but cannot do its work here: what the user can do about it (doctor
    /// shows it as a warning).
    public var fix: String?

    public init(name: String, enabled: Bool, detail: String, fix: String? = nil) {
        self.name = name
        self.enabled = enabled
        self.detail = detail
        self.fix = fix
    }

    public var json: JSONValue {
        var o: JSONObject = ["name": .string(name), "enabled": .bool(enabled), "detail": .string(detail)]
        if let fix { o["fix"] = .string(fix) }
        return .object(o)
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "sources", problem: "holds something that is not an object") }
        guard let name = o["name"]?.stringValue, !name.isEmpty, name.utf8.count <= 64 else { throw ValidationError(field: "name", problem: "missing or too long") }
        guard case .bool(let enabled)? = o["enabled"] else { throw ValidationError(field: "enabled", problem: "must be true or false") }
        let detail = o["detail"]?.stringValue ?? ""
        guard detail.utf8.count <= 4096 else { throw ValidationError(field: "detail", problem: "is longer than 4096 bytes") }
        let fix = o["fix"]?.stringValue
        guard (fix?.utf8.count ?? 0) <= 4096 else { throw ValidationError(field: "fix", problem: "is longer than 4096 bytes") }
        self.init(name: name, enabled: enabled, detail: detail, fix: fix)
    }

    /// `{"sources": [...]}`, at most 32 of them.
    public static func list(json: JSONValue) throws(ValidationError) -> [DesktopSource] {
        guard let items = json.objectValue?["sources"]?.arrayValue else { throw ValidationError(field: "sources", problem: "missing") }
        guard items.count <= 32 else { throw ValidationError(field: "sources", problem: "lists more than 32") }
        var out: [DesktopSource] = []
        for item in items { out.append(try DesktopSource(json: item)) }
        return out
    }

    public static func listJSON(_ sources: [DesktopSource]) -> JSONValue {
        .object(["sources": .array(sources.map(\.json))])
    }
}

/// A change the user asked for: turn `source` on or off.
public struct DesktopSourceChange: Sendable, Equatable {
    public var source: String
    public var enabled: Bool

    public init(source: String, enabled: Bool) {
        self.source = source
        self.enabled = enabled
    }
}

/// Why the session agent could not make a change (`unknown_source`, `settings_unwritable`).
public struct SourceChangeError: Error, Sendable, Equatable {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}
