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
    private let entries: NIOLockedValueBox<[DeviceID: Entry]>
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

    /// Adds or renames a trusted device (trusted since `now`, or since it first was).
    @discardableResult
    public func trust(_ id: DeviceID, name: String, address: String? = nil, at now: Timestamp) throws -> Entry {
        // Saved first: what the API reports and what is in force must agree.
        var snapshot = entries.withLockedValue { $0 }
        snapshot[id] = Entry(id: id, name: name, addedAt: snapshot[id]?.addedAt ?? now, address: address ?? snapshot[id]?.address)
        try save(snapshot)
        let entry = snapshot[id]!
        entries.withLockedValue { $0[id] = entry }
        return entry
    }

    /// Returns whether it was trusted.
    @discardableResult
    public func untrust(_ id: DeviceID) throws -> Bool {
        // Withdrawn in memory first, whatever happens to the file: a device the user
        // untrusts must lose access now, even if the disk is full.
        let (was, snapshot) = entries.withLockedValue { e in (e.removeValue(forKey: id) != nil, e) }
        if was { try save(snapshot) }
        return was
    }

    private func save(_ snapshot: [DeviceID: Entry]) throws {
        let list: [JSONValue] = snapshot.values.sorted { $0.addedAt < $1.addedAt }.map {
            var o: JSONObject = ["id": .string($0.id.description), "name": .string($0.name), "addedAt": .string($0.addedAt.rfc3339)]
            if let a = $0.address { o["address"] = .string(a) }
            return .object(o)
        }
        let doc: JSONValue = .object(["version": .integer(1), "devices": .array(list)])
        try StateWriter.shared.write(doc.serializedBytes(pretty: true) + [UInt8(ascii: "\n")], to: path)
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
