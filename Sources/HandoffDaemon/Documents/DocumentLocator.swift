import Crypto
import HandoffCore
import HandoffControlAPI
#if canImport(Glibc)
import Glibc
#endif

/// Turns a local file into a reference another workstation can map (at the origin), and a
/// reference back into a local file (on the continuing side), never stepping outside the
/// synced folder the reference names: every path is resolved (symlinks too) and must stay
/// inside the folder's own resolved path. Blocking file I/O: run it off the event loops.
enum DocumentLocator {
    /// At the origin: `path` must name a regular file; its reference says where it is
    /// synced (if anywhere), its size and its SHA-256.
    static func reference(for path: String, roots: SyncedRoots) throws(HandoffError) -> (file: String, reference: DocumentReference) {
        guard path.hasPrefix("/") else { throw HandoffError.invalid(ValidationError(field: "document", problem: "must be an absolute path")) }
        let resolved = SyncedRoots.resolved(path)
        let (size, hash) = try digest(resolved, field: "document")
        if let (root, relative) = roots.locate(resolved) {
            return (resolved, DocumentReference(root: root.id, path: relative, size: size, sha256: hash))
        }
        let name = String(resolved.split(separator: "/").last ?? "document")
        return (resolved, DocumentReference(root: nil, path: name, size: size, sha256: hash))
    }

    enum LocalState: Equatable {
        /// The same file is here (same size and content).
        case same(String)
        /// A file is at the mapped place, but not the same.
        case differs(String)
        /// Nothing at the mapped place.
        case missing(String)
        /// No place to look: not in a synced folder, or that folder is not synced here, or
        /// the path would lead out of it.
        case unmapped(String)
    }

    /// On the continuing side: where the document is here, and whether it is the same.
    static func local(_ reference: DocumentReference, roots: SyncedRoots) -> LocalState {
        guard let id = reference.root else { return .unmapped("the document is not in a synced folder on the other workstation") }
        guard let root = roots.root(id) else { return .unmapped("the synced folder \(id) is not synced on this workstation") }
        let candidate = root.path + "/" + reference.path
        guard let p = realpath(candidate, nil) else { return .missing(candidate) }
        let resolved = String(cString: p)
        free(p)
        guard resolved.hasPrefix(root.path + "/") else {
            return .unmapped("\(reference.path) leads out of the synced folder \(root.path) (a symbolic link); not opening it")
        }
        guard let (size, hash) = try? digest(resolved, field: "document") else { return .differs(resolved) }
        return size == reference.size && hash == reference.sha256 ? .same(resolved) : .differs(resolved)
    }

    /// Size and SHA-256 of a regular file, read in 1 MiB pieces.
    static func digest(_ path: String, field: String) throws(HandoffError) -> (Int64, [UInt8]) {
        // O_NONBLOCK: a FIFO where a file should be must not hang a thread-pool thread.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw HandoffError.invalid(ValidationError(field: field, problem: "\(path): \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw HandoffError.invalid(ValidationError(field: field, problem: "\(path) is not a regular file"))
        }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total: Int64 = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw HandoffError.invalid(ValidationError(field: field, problem: "\(path): \(String(cString: strerror(errno)))")) }
            if n == 0 { break }
            hasher.update(data: buffer[0..<n])
            total += Int64(n)
        }
        return (total, Array(hasher.finalize()))
    }
}

extension ContinuedDocument {
    /// The local API's view of a reference and where it is here.
    init(_ reference: DocumentReference, _ local: DocumentLocator.LocalState) {
        let (state, path, reason): (String, String?, String?) = switch local {
        case .same(let p): ("same", p, nil)
        case .differs(let p): ("differs", p, nil)
        case .missing(let p): ("missing", p, nil)
        case .unmapped(let why): ("unmapped", nil, why)
        }
        self.init(path: reference.path, size: reference.size, sha256: reference.sha256.hexString, state: state, localPath: path, reason: reason,
                  root: reference.root.map { Root(kind: $0.kind, id: $0.id) })
    }
}
