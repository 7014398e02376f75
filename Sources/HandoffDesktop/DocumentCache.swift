import Crypto
import FoundationEssentials
import HandoffClient
import HandoffControlAPI
#if canImport(Glibc)
import Glibc
#endif

/// Copies of documents fetched from other workstations (when the synced copy here is
/// missing or different): `$XDG_CACHE_HOME/handoff/documents/ACTIVITY/NAME`, written under
/// a temporary name, checked against the SHA-256 the origin announced, then renamed. The
/// folder stays under `capacityBytes`: the oldest copies go first.
public struct DocumentCache: Sendable {
    public let directory: String
    public let capacityBytes: Int64

    public init(directory: String, capacityBytes: Int64) {
        self.directory = directory
        self.capacityBytes = capacityBytes
    }

    public struct Failure: Error, CustomStringConvertible {
        public let code: String
        public let description: String
    }

    /// Fetches the document of continued activity `id` through a continuation stream.
    /// Returns the copy's path, and whether it is the very file that was offered.
    public func fetch(_ id: String, _ document: ContinuedDocument, client: HandoffClient) async throws -> (path: String, verified: Bool) {
        guard document.size <= capacityBytes else {
            throw Failure(code: "document_too_large",
                          description: "the document is \(document.size / 1_000_000) MB, more than the document cache holds (\(capacityBytes / 1_000_000) MB; raise document-cache-mb in handoff-session.conf)")
        }
        let name = document.fileName
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
            throw Failure(code: "bad_document", description: "the document's name \"\(name)\" is unusable")
        }
        let fm = FileManager.default
        let folder = directory + "/" + id
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try makeRoom(for: document.size, keeping: id)
        let target = folder + "/" + name, temporary = target + ".part"
        try? fm.removeItem(atPath: temporary)  // what an interrupted fetch left
        let handle: WritableFile
        do { handle = try WritableFile(creating: temporary) } catch {
            throw Failure(code: "document_fetch_failed", description: "\(error)")
        }
        var hasher = SHA256()
        do {
            let written: Int64 = try await client.withStream(toActivity: id, document: true) { stream in
                try await stream.writer.finish()  // nothing to ask: the origin just sends the file
                var total: Int64 = 0
                while let bytes = try await stream.reader.read() {
                    total += Int64(bytes.readableBytes)
                    guard total <= document.size + (1 << 20), total <= capacityBytes else {
                        throw Failure(code: "document_fetch_failed", description: "the origin sent more than the document's announced size")
                    }
                    let chunk = Array(bytes.readableBytesView)
                    hasher.update(data: chunk)
                    try handle.write(chunk)
                }
                return total
            }
            try handle.close()
            _ = written
        } catch {
            try? handle.close()
            try? fm.removeItem(atPath: temporary)
            if let f = error as? Failure { throw f }
            throw Failure(code: "document_fetch_failed", description: "could not fetch the document: \(error)")
        }
        let hex = Array(hasher.finalize()).hexString
        try? fm.removeItem(atPath: target)
        try fm.moveItem(atPath: temporary, toPath: target)
        return (target, hex == document.sha256)
    }

    /// Removes the oldest cached copies until `size` more bytes fit (never `keeping`'s).
    func makeRoom(for size: Int64, keeping: String) throws {
        let fm = FileManager.default
        guard let entries = try? fm.contentsOfDirectory(atPath: directory) else { return }
        var folders: [(path: String, modified: Date, bytes: Int64)] = []
        for e in entries where e != keeping {
            let path = directory + "/" + e
            var bytes: Int64 = 0
            for f in (try? fm.contentsOfDirectory(atPath: path)) ?? [] {
                var info = stat()
                if stat(path + "/" + f, &info) == 0 { bytes += Int64(info.st_size) }
            }
            let modified = ((try? fm.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast
            folders.append((path, modified, bytes))
        }
        var total = folders.reduce(0) { $0 + $1.bytes }
        for f in folders.sorted(by: { $0.modified < $1.modified }) where total + size > capacityBytes {
            try? fm.removeItem(atPath: f.path)
            total -= f.bytes
        }
    }
}
