import HandoffCore
import HandoffSystem
#if canImport(Glibc)
import Glibc
#endif

/// The folders this user syncs between devices, as the sync tools themselves record them:
/// Syncthing's config.xml (folder IDs are the same on every device), Nextcloud's
/// nextcloud.cfg (account URL, user and remote path), and `synced-root = NAME=PATH` lines
/// of handoffd.conf. Read afresh when needed: the files are small and change rarely.
struct SyncedRoots: Sendable {
    struct Root: Sendable, Equatable {
        let id: SyncedRootID
        /// Resolved (realpath) when it exists.
        let path: String
    }

    var roots: [Root]

    static func discover(configured: [(name: String, path: String)], home: String = DefaultPaths.homeDirectory,
                         stateHome: String? = DefaultPaths.stateHome, configHome: String? = DefaultPaths.configHome) -> SyncedRoots {
        var roots: [Root] = []
        let state = stateHome ?? home + "/.local/state", config = configHome ?? home + "/.config"
        for file in [state + "/syncthing/config.xml", config + "/syncthing/config.xml"] {
            guard let text = read(file) else { continue }
            for folder in SyncthingConfig.folders(text) {
                let path = folder.path.hasPrefix("~/") ? home + folder.path.dropFirst(1) : folder.path
                roots.append(Root(id: SyncedRootID(kind: "syncthing", id: folder.id), path: resolved(path)))
            }
            break  // the newer location wins when both exist
        }
        if let text = read(config + "/Nextcloud/nextcloud.cfg") {
            for f in NextcloudConfig.folders(text) {
                roots.append(Root(id: SyncedRootID(kind: "nextcloud", id: f.identity), path: resolved(f.localPath)))
            }
        }
        for c in configured {
            roots.append(Root(id: SyncedRootID(kind: "configured", id: c.name), path: resolved(c.path)))
        }
        return SyncedRoots(roots: roots.filter { $0.path.hasPrefix("/") && $0.path != "/" })
    }

    /// The root `file` (resolved) lies in, and the path inside it. The deepest root wins
    /// (a synced folder inside another).
    func locate(_ resolvedFile: String) -> (Root, String)? {
        var best: (Root, String)?
        for r in roots where resolvedFile.hasPrefix(r.path + "/") {
            let rel = String(resolvedFile.dropFirst(r.path.count + 1))
            if best == nil || r.path.count > best!.0.path.count { best = (r, rel) }
        }
        return best
    }

    func root(_ id: SyncedRootID) -> Root? { roots.first { $0.id == id } }

    static func resolved(_ path: String) -> String {
        guard let p = realpath(path, nil) else { return path }
        defer { free(p) }
        return String(cString: p)
    }

    static func read(_ path: String) -> String? {
        guard let bytes = try? BoundedFile.read(path, limit: 4 << 20) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The `<folder id="…" path="…">` elements of Syncthing's config.xml. A small attribute
/// reader, not an XML parser: that is all of the file handoff needs.
enum SyncthingConfig {
    struct Folder: Equatable {
        let id: String
        let path: String
    }

    static func folders(_ text: String) -> [Folder] {
        var out: [Folder] = []
        var rest = Substring(text)
        while let start = rest.firstRange(of: "<folder ") {
            rest = rest[start.upperBound...]
            guard let end = rest.firstIndex(of: ">") else { break }
            let attributes = parseAttributes(rest[..<end])
            if let id = attributes["id"], let path = attributes["path"], !id.isEmpty, !path.isEmpty { out.append(Folder(id: id, path: path)) }
            rest = rest[end...]
        }
        return out
    }

    static func parseAttributes(_ s: Substring) -> [String: String] {
        var out: [String: String] = [:]
        var i = s.startIndex
        while i < s.endIndex {
            while i < s.endIndex, s[i] == " " || s[i] == "\n" || s[i] == "\t" || s[i] == "\r" { i = s.index(after: i) }
            let nameStart = i
            while i < s.endIndex, s[i] != "=", s[i] != " " { i = s.index(after: i) }
            let name = String(s[nameStart..<i])
            guard i < s.endIndex, s[i] == "=" else { break }
            i = s.index(after: i)
            guard i < s.endIndex, s[i] == "\"" || s[i] == "'" else { break }
            let quote = s[i]
            i = s.index(after: i)
            let valueStart = i
            while i < s.endIndex, s[i] != quote { i = s.index(after: i) }
            guard i < s.endIndex else { break }
            out[name] = unescape(s[valueStart..<i])
            i = s.index(after: i)
        }
        return out
    }

    static func unescape(_ s: Substring) -> String {
        String(s).replacing("&quot;", with: "\"").replacing("&apos;", with: "'").replacing("&lt;", with: "<")
            .replacing("&gt;", with: ">").replacing("&amp;", with: "&")
    }
}

/// The synced folders of Nextcloud's desktop client (nextcloud.cfg, an INI file):
/// `N\Folders\M\localPath`, `…\targetPath`, with the account's `N\url` and `N\dav_user`.
enum NextcloudConfig {
    struct Folder: Equatable {
        let localPath: String
        /// The same on every device syncing that remote folder of that account.
        let identity: String
    }

    static func folders(_ text: String) -> [Folder] {
        var values: [String: String] = [:]
        var section = ""
        for raw in text.textLines {
            let line = raw.trimmingCharacters()
            if line.hasPrefix("[") { section = line; continue }
            guard section == "[Accounts]", let eq = line.firstIndex(of: "=") else { continue }
            values[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        var out: [Folder] = []
        for (key, local) in values where key.hasSuffix("\\localPath") {
            let parts = key.split(separator: "\\")
            guard parts.count == 4, parts[1] == "Folders" else { continue }
            let account = parts[0], folder = parts[2]
            let target = values["\(account)\\Folders\\\(folder)\\targetPath"] ?? "/"
            let url = values["\(account)\\url"] ?? "", user = values["\(account)\\dav_user"] ?? values["\(account)\\user"] ?? ""
            var path = local
            while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
            out.append(Folder(localPath: path, identity: "\(user)@\(url)\(target.hasPrefix("/") ? "" : "/")\(target)"))
        }
        return out.sorted { $0.localPath < $1.localPath }
    }
}
