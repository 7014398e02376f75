import FoundationEssentials
import HandoffCore
/// The session agent's settings: `~/.config/handoff/handoff-session.conf`, `key = value`
/// lines (`#` starts a comment). Read again before each launch, so a change needs no
/// restart.
public struct SessionConfiguration: Sendable, Equatable {
    /// "Activity available" notifications.
    public var notifications = true
    /// activityType -> desktop id: `handler.org.example.editor.edit-note = org.gnome.TextEditor.desktop`.
    public var handlers: [String: String] = [:]
    /// Fetch a continued document that is missing or different here (a copy in the cache).
    public var fetchDocuments = true
    /// The cache of fetched documents, in MB.
    public var documentCacheMB: Int64 = 1024
    /// The media source: what a media player plays becomes the current activity (MPRIS).
    public var media = true
    /// Pause the player here when its media is continued on another workstation.
    public var pauseOrigin = true
    /// The recent-documents source: the document opened last in a synced folder becomes the
    /// current activity (recently-used.xbel).
    public var recentDocuments = true
    /// The browser source: the focused tab (through the browser extension's host).
    public var browser = true
    /// Web pages on these domains are never offered (`example.org;*.bank.example`).
    public var neverOfferDomains: [DomainClaim] = []
    /// The clipboard: copies here are announced to the other workstations (formats only),
    /// and theirs can be pasted here.
    public var clipboard = true
    /// MIME types never announced (`image/*;text/html`).
    public var clipboardExcludedTypes: [String] = []
    /// Apps whose copies are never announced, by any name the display server gives them
    /// (`WM_CLASS` instance or class, process name), ignoring case: `keepassxc;org.example.Vault`.
    /// X11 only: Wayland's data-control protocol does not say which app copied.
    public var clipboardExcludedApps: [String] = []
    /// The tray icon (a StatusNotifierItem) with its menu, where a panel shows one.
    public var tray = true

    public init() {}

    public struct FileError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(parsing text: String, path: String) throws {
        for (n, raw) in text.textLines.enumerated() {
            let line = String(raw.prefix { $0 != "#" }).trimmingSpaces
            guard !line.isEmpty else { continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw FileError(description: "\(path):\(n + 1): expected `key = value`, got \"\(line)\"")
            }
            let key = String(line[..<eq]).trimmingSpaces, value = String(line[line.index(after: eq)...]).trimmingSpaces
            func yes() throws -> Bool {
                guard value == "yes" || value == "no" else { throw FileError(description: "\(path):\(n + 1): \(key) must be yes or no") }
                return value == "yes"
            }
            switch key {
            case "notifications": notifications = try yes()
            case "media": media = try yes()
            case "pause-origin": pauseOrigin = try yes()
            case "recent-documents": recentDocuments = try yes()
            case "browser": browser = try yes()
            case "fetch-documents": fetchDocuments = try yes()
            case "clipboard": clipboard = try yes()
            case "tray": tray = try yes()
            case "clipboard-exclude-types":
                let list = value.split(separator: ";").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
                let bad = list.filter { !ClipboardFormat.isValidType($0.hasSuffix("/*") ? String($0.dropLast()) + "x" : $0) }
                guard bad.isEmpty else {
                    throw FileError(description: "\(path):\(n + 1): not MIME types (such as image/png or image/*): \(bad.joined(separator: ", "))")
                }
                clipboardExcludedTypes = list
            case "clipboard-exclude-apps":
                let list = value.split(separator: ";").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
                let bad = list.filter { $0.utf8.count > 256 || $0.unicodeScalars.contains { $0.properties.generalCategory == .control } }
                guard bad.isEmpty else {
                    throw FileError(description: "\(path):\(n + 1): not app names (such as keepassxc or org.example.Vault): \(bad.joined(separator: ", "))")
                }
                clipboardExcludedApps = list
            case "never-offer-domains":
                let parsed = HandlerDeclaration.domains(value)
                guard parsed.rejected.isEmpty else {
                    throw FileError(description: "\(path):\(n + 1): not domain names: \(parsed.rejected.joined(separator: ", "))")
                }
                neverOfferDomains = parsed.valid
            case "document-cache-mb":
                guard let mb = Int64(value), mb > 0 else { throw FileError(description: "\(path):\(n + 1): document-cache-mb must be a positive whole number") }
                documentCacheMB = mb
            case _ where key.hasPrefix("handler."):
                let type = String(key.dropFirst("handler.".count))
                guard HandlerDeclaration.activityTypes(type).valid == [type] else {
                    throw FileError(description: "\(path):\(n + 1): \"\(type)\" is not an activity type")
                }
                guard value.hasSuffix(".desktop"), !value.contains("/") else {
                    throw FileError(description: "\(path):\(n + 1): name a desktop id such as org.example.Editor.desktop, not \"\(value)\"")
                }
                handlers[type] = value
            default:
                throw FileError(description: "\(path):\(n + 1): unknown setting \"\(key)\"")
            }
        }
    }
}

extension SessionConfiguration {
    /// The settings in `path`: the defaults when there is no such file; an error for one
    /// over 1 MiB or one that does not parse. For the agent and the browser host alike.
    public static func load(from path: String) throws -> SessionConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else { return SessionConfiguration() }
        guard data.count <= 1 << 20 else { throw FileError(description: "\(path) is over 1 MiB: not a settings file") }
        return try SessionConfiguration(parsing: String(decoding: data, as: UTF8.self), path: path)
    }

    /// `text` with `key = value`: the key's line replaced where it is (comments and other
    /// lines kept), or appended.
    public static func setting(_ key: String, to value: String, in text: String) -> String {
        var lines = text.textLines
        if lines.last == "" { lines.removeLast() }
        let line = "\(key) = \(value)"
        func isKey(_ l: String) -> Bool {
            let content = l.prefix { $0 != "#" }
            guard let eq = content.firstIndex(of: "=") else { return false }
            return String(content[..<eq]).trimmingSpaces == key
        }
        // The key's first line takes the value; later lines of the same key would win when
        // the file is read, so they go.
        if let i = lines.firstIndex(where: isKey) {
            lines[i] = line
            lines = lines.enumerated().filter { $0.offset <= i || !isKey($0.element) }.map(\.element)
        } else {
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
