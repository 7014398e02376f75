/// A directory named by the synced folder it lies in and the path inside it, so that a
/// workstation syncing the same folder can find its own copy (a terminal's directory,
/// `TerminalSession.syncedFolder`). Unlike `DocumentReference`, it may name the folder
/// itself (an empty path).
public struct SyncedFolderPath: Sendable, Equatable {
    public static let userInfoKey = "syncedFolder"

    public var root: SyncedRootID
    /// Inside the root, `/`-separated, relative, no `.` or `..`; empty for the root itself.
    public var path: String

    public init(root: SyncedRootID, path: String) {
        self.root = root
        self.path = path
    }

    public var propertyValue: PropertyValue {
        .dictionary(["kind": .string(root.kind), "id": .string(root.id), "path": .string(path)])
    }

    /// Strict, as everything from a peer: a known kind, an id, a path that cannot leave the folder.
    public init(propertyValue v: PropertyValue) throws(ValidationError) {
        let field = "userInfo.\(Self.userInfoKey)"
        guard case .dictionary(let d) = v, case .string(let kind)? = d["kind"], case .string(let id)? = d["id"],
              case .string(let path)? = d["path"] else {
            throw ValidationError(field: field, problem: "needs kind, id and path (strings)")
        }
        guard SyncedRootID.kinds.contains(kind), !id.isEmpty, id.utf8.count <= 1024 else {
            throw ValidationError(field: field, problem: "kind must be one of \(SyncedRootID.kinds.joined(separator: ", ")) and id 1 to 1024 bytes")
        }
        if !path.isEmpty { try DocumentReference.validate(relativePath: path, field: field + ".path") }
        self.init(root: SyncedRootID(kind: kind, id: id), path: path)
    }

    /// Where it is under a local copy of the root.
    public func locate(under rootPath: String) -> String {
        path.isEmpty ? rootPath : rootPath + "/" + path
    }
}
