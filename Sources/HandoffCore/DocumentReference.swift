/// A document an activity is about, in a form another workstation can map to its own copy:
/// the synced folder it lives in (its identity is the same on every device: a Syncthing
/// folder ID, a Nextcloud account and remote path, a name the user gave), the path inside
/// it, and its size and SHA-256 to tell whether the copy there is the same. It travels in
/// `userInfo` under `handoff.document`, so peers need nothing new to carry it.
public struct DocumentReference: Sendable, Equatable {
    public static let userInfoKey = "handoff.document"

    /// Nil for a file outside any synced folder: the other side always fetches a copy.
    public var root: SyncedRootID?
    /// Inside the root, `/`-separated, never absolute, never `..`; for a file outside any
    /// root, just its name.
    public var path: String
    public var size: Int64
    public var sha256: [UInt8]

    public init(root: SyncedRootID?, path: String, size: Int64, sha256: [UInt8]) {
        self.root = root
        self.path = path
        self.size = size
        self.sha256 = sha256
    }

    /// The file's own name, for a cached copy.
    public var fileName: String { String(path.split(separator: "/").last ?? "document") }

    public var propertyValue: PropertyValue {
        var d: [String: PropertyValue] = ["path": .string(path), "size": .integer(size), "sha256": .data(sha256)]
        if let root { d["root"] = .dictionary(["kind": .string(root.kind), "id": .string(root.id)]) }
        return .dictionary(d)
    }

    /// Strict: what comes from another machine either is a clean reference or is refused.
    public init(propertyValue v: PropertyValue) throws(ValidationError) {
        let field = "userInfo.\(Self.userInfoKey)"
        guard case .dictionary(let d) = v else { throw ValidationError(field: field, problem: "is not a dictionary") }
        guard case .string(let p)? = d["path"] else { throw ValidationError(field: field + ".path", problem: "missing or not a string") }
        guard case .integer(let n)? = d["size"], n >= 0 else { throw ValidationError(field: field + ".size", problem: "missing or negative") }
        guard case .data(let h)? = d["sha256"], h.count == 32 else { throw ValidationError(field: field + ".sha256", problem: "must be 32 bytes") }
        var root: SyncedRootID?
        if let r = d["root"], r != .null {
            guard case .dictionary(let rd) = r, case .string(let kind)? = rd["kind"], case .string(let id)? = rd["id"],
                  !id.isEmpty, id.utf8.count <= 1024, SyncedRootID.kinds.contains(kind) else {
                throw ValidationError(field: field + ".root", problem: "needs kind (\(SyncedRootID.kinds.joined(separator: ", "))) and id")
            }
            root = SyncedRootID(kind: kind, id: id)
        }
        try Self.validate(relativePath: p, field: field + ".path", single: root == nil)
        self.init(root: root, path: p, size: n, sha256: h)
    }

    /// A path that cannot leave its folder, whatever the folder: relative, no `.` or `..`,
    /// no empty parts, no NUL, bounded.
    public static func validate(relativePath p: String, field: String = "path", single: Bool = false) throws(ValidationError) {
        let parts = p.split(separator: "/", omittingEmptySubsequences: false)
        guard !p.isEmpty, p.utf8.count <= 4096, !p.hasPrefix("/"), !p.utf8.contains(0),
              parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw ValidationError(field: field, problem: "\"\(p.prefix(80))\" would leave its folder (absolute, empty parts, . or ..)")
        }
        if single && parts.count != 1 { throw ValidationError(field: field, problem: "a document outside synced folders is named by its file name alone") }
    }
}

/// The identity of a synced folder, the same on every device that syncs it.
public struct SyncedRootID: Sendable, Hashable, CustomStringConvertible {
    public static let kinds = ["syncthing", "nextcloud", "configured"]
    public var kind: String
    public var id: String

    public init(kind: String, id: String) {
        self.kind = kind
        self.id = id
    }

    public var description: String { "\(kind):\(id)" }
}
