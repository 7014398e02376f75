import HandoffCore
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// The devices this user trusts: only they get past the TLS handshake. Kept in
/// `trusted-devices.json`; read from TLS verification callbacks on any thread, hence the lock.
public final class TrustStore: Sendable {
    public struct Entry: Sendable, Equatable {
        public var id: DeviceID
        public var name: String
        public var addedAt: Timestamp
        /// Where to dial it whatever mDNS says (`trust ID --address HOST:PORT`).
        public var address: String?
    }

    private let path: String
    /// The entries and a count of their changes (see `trust`).
    private let entries: NIOLockedValueBox<[DeviceID: Entry]>
    private let generation = NIOLockedValueBox<UInt64>(0)
    /// Why the file could not be read at start (it was kept aside), for `handoffctl doctor`.
    let loadProblem: String?

    static let fileName = "trusted-devices.json"

    public init(stateDirectory: String, logger: Logger) {
        path = stateDirectory + "/" + Self.fileName
        let (loaded, problem) = TrustStore.load(path, logger: logger)
        entries = NIOLockedValueBox(loaded)
        loadProblem = problem
    }

    public func isTrusted(_ id: DeviceID) -> Bool { entries.withLockedValue { $0[id] != nil } }

    public func entry(_ id: DeviceID) -> Entry? { entries.withLockedValue { $0[id] } }

    public var all: [Entry] { entries.withLockedValue { Array($0.values) }.sorted { $0.addedAt < $1.addedAt } }

    /// Adds or renames a trusted device (trusted since `now`, or since it first was). Saved
    /// first: what the API reports and what is in force must agree, so on a full disk it
    /// throws and nothing changes. The file is written off the caller's thread; if the
    /// entries changed meanwhile it is written again from them.
    @discardableResult
    public func trust(_ id: DeviceID, name: String, address: String? = nil, at now: Timestamp) async throws -> Entry {
        while true {
            let (snapshot, seen) = entries.withLockedValue { e in (e, generation.withLockedValue { $0 }) }
            var next = snapshot
            let entry = Entry(id: id, name: name, addedAt: snapshot[id]?.addedAt ?? now, address: address ?? snapshot[id]?.address)
            next[id] = entry
            let pending = try await StateWriter.shared.prepare(Self.bytes(next), to: path)
            // Committed under the lock, so that no other change slips between the check and
            // the queueing (committing only queues: no I/O under the lock).
            let stood = entries.withLockedValue { e -> Bool in
                guard generation.withLockedValue({ $0 }) == seen else { return false }
                StateWriter.shared.commit(pending)
                e[id] = entry
                generation.withLockedValue { $0 &+= 1 }
                return true
            }
            if stood { return entry }
            StateWriter.shared.discard(pending)
        }
    }

    /// Returns whether it was trusted. Withdrawn in memory first, whatever happens to the
    /// file: a device the user untrusts must lose access now, even if the disk is full
    /// (the request that asked learns of a failed save from `StateWriter.settle`).
    @discardableResult
    public func untrust(_ id: DeviceID) -> Bool {
        entries.withLockedValue { e in
            guard e.removeValue(forKey: id) != nil else { return false }
            generation.withLockedValue { $0 &+= 1 }
            // Queued under the lock: files are written in the order the entries changed.
            StateWriter.shared.write(Self.bytes(e), to: path)
            return true
        }
    }

    private static func bytes(_ snapshot: [DeviceID: Entry]) -> [UInt8] {
        let list: [JSONValue] = snapshot.values.sorted { $0.addedAt < $1.addedAt }.map {
            var o: JSONObject = ["id": .string($0.id.description), "name": .string($0.name), "addedAt": .string($0.addedAt.rfc3339)]
            if let a = $0.address { o["address"] = .string(a) }
            return .object(o)
        }
        let doc: JSONValue = .object(["version": .integer(1), "devices": .array(list)])
        return doc.serializedBytes(pretty: true) + [UInt8(ascii: "\n")]
    }

    private static func load(_ path: String, logger: Logger) -> ([DeviceID: Entry], String?) {
        do {
            guard let bytes = try AtomicFile.read(path) else { return ([:], nil) }
            guard case .array(let list)? = try JSONValue(parsing: bytes).objectValue?["devices"] else {
                throw AtomicFile.Failure(description: "no \"devices\" list")
            }
            var out: [DeviceID: Entry] = [:]
            for item in list {
                guard let o = item.objectValue, let idText = o["id"]?.stringValue, let id = try? DeviceID(parsing: idText) else { continue }
                out[id] = Entry(id: id, name: o["name"]?.stringValue ?? "",
                                addedAt: o["addedAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) ?? Timestamp(seconds: 0),
                                address: o["address"]?.stringValue)
            }
            return (out, nil)
        } catch {
            // Trusting no one is safe; crashing, or overwriting the file at the next trust, is not.
            let aside = AtomicFile.keepAside(path)
            logger.error("trusted devices could not be read; trusting none until fixed", metadata: ["file": "\(path)", "kept": "\(aside)", "error": "\(error)"])
            return ([:], "\(path) could not be read (\(error)); it was kept as \(aside), and this workstation trusts no other until it is restored or you pair again")
        }
    }
}
