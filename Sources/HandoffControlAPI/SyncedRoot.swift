import HandoffCore

/// `GET /v1/synced-roots`: a folder this workstation syncs (Syncthing, Nextcloud, or a
/// `synced-root` line of handoffd.conf), resolved to its path here.
public struct SyncedRoot: Sendable, Equatable {
    public var kind: String
    public var id: String
    public var path: String

    public init(kind: String, id: String, path: String) {
        self.kind = kind
        self.id = id
        self.path = path
    }

    public var json: JSONValue { .object(["kind": .string(kind), "id": .string(id), "path": .string(path)]) }

    public static func listJSON(_ roots: [SyncedRoot]) -> JSONValue { .object(["roots": .array(roots.map(\.json))]) }

    /// Entries without the three strings are skipped.
    public static func list(json: JSONValue) -> [SyncedRoot] {
        (json.objectValue?["roots"]?.arrayValue ?? []).compactMap { item in
            let o = item.objectValue
            guard let kind = o?["kind"]?.stringValue, let id = o?["id"]?.stringValue, let path = o?["path"]?.stringValue else { return nil }
            return SyncedRoot(kind: kind, id: id, path: path)
        }
    }
}
