import HandoffCore
import HandoffControlAPI
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Apps' restoration state (Docs/LocalAPI.md §20), one file per app in
/// `restoration/` of the state directory, so it outlives handoffd. It is this
/// workstation's alone: nothing here reaches another workstation, except state an app
/// marked to go with one of its activities when that activity is continued.
public actor RestorationStore {
    private let directory: String
    private let logger: Logger
    private var records: [String: RestorationRecord] = [:] { didSet { generation &+= 1 } }
    /// Counts the changes of `records`: a save that waited for the disk knows whether they
    /// changed meanwhile (the actor takes other calls while it waits).
    private var generation: UInt64 = 0
    static let maximumApps = 256
    static let directoryName = "restoration"

    init(stateDirectory: String, logger: Logger) {
        directory = stateDirectory + "/" + Self.directoryName
        self.logger = logger
        records = RestorationStore.load(directory, logger: logger)
    }

    // MARK: The API's side

    func save(app: String, version: String, entries: JSONObject, continueWith: ActivityID?, at now: Timestamp) async throws(HandoffError) {
        while try await !saveOnce(app: app, version: version, entries: entries, continueWith: continueWith, at: now) {}
    }

    /// Saved first, then kept: on a full disk the request is refused and nothing changes.
    /// False when the records changed while the file was being written: start again.
    private func saveOnce(app: String, version: String, entries: JSONObject, continueWith: ActivityID?, at now: Timestamp) async throws(HandoffError) -> Bool {
        do throws(ValidationError) {
            try RestorationRecord.validateApp(app)
            guard !version.isEmpty, version.utf8.count <= 255 else { throw ValidationError(field: "version", problem: "must be 1 to 255 bytes") }
            try RestorationRecord.validate(entries: entries)
        } catch { throw HandoffError.badRequest(error.description) }
        guard records[app] != nil || records.count < Self.maximumApps else {
            throw HandoffError(.conflict, code: "too_many_apps", message: "state is kept for \(Self.maximumApps) apps at most; discard some (handoffctl state)")
        }
        var record = RestorationRecord(version: version, savedAt: now, entries: entries, continueWith: continueWith)
        // A save is not a launch: what the last launch did still counts.
        if let old = records[app] {
            record.failedLaunches = old.failedLaunches
            record.launchStarted = old.launchStarted
            record.launchSession = old.launchSession
        }
        let bytes = RestorationStore.json(record).serializedBytes()
        guard bytes.count <= RestorationRecord.maximumEncodedBytes else {
            throw HandoffError(.invalid, code: "state_too_large", message: "restoration state is \(bytes.count) bytes; keep it under \(RestorationRecord.maximumEncodedBytes) (it is for restoring the interface, not the user's data)")
        }
        let seen = generation
        let pending: AtomicFile.Pending
        do { pending = try await StateWriter.shared.prepare(bytes, to: path(app)) } catch { throw .notSaved("the restoration state", error) }
        guard generation == seen else {
            StateWriter.shared.discard(pending)
            return false
        }
        StateWriter.shared.commit(pending)
        records[app] = record
        return true
    }

    /// What a launching app gets: the state, or nothing and why.
    func restore(app: String, version: String, acceptOlder: Bool, session: String?, at now: Timestamp) throws(HandoffError) -> RestoredState {
        guard var record = records[app] else { return RestoredState(state: nil, reason: "none_saved") }
        switch record.restore(version: version, acceptOlder: acceptOlder, session: session, at: now) {
        case .discard(let reason):
            logger.info("restoration state discarded", metadata: ["app": "\(app)", "reason": "\(reason)", "saved-version": "\(record.version)"])
            remove(app)
            return RestoredState(state: nil, reason: reason, savedVersion: record.version)
        case .state(let older):
            // The launch's bookkeeping is not worth refusing the state for: on a full disk
            // it lives in memory only (a crash loop across a restart goes unnoticed).
            write(app, record)
            records[app] = record
            return RestoredState(state: record.entries, savedVersion: record.version, savedAt: record.savedAt, older: older)
        }
    }

    func restored(app: String) throws(HandoffError) {
        guard var record = records[app] else { throw HandoffError(.notFound, code: "no_state", message: "no restoration state is kept for \(app)") }
        record.restored()
        write(app, record)
        records[app] = record
    }

    @discardableResult
    func discard(app: String) -> Bool {
        guard records[app] != nil else { return false }
        remove(app)
        return true
    }

    func list() -> [SavedState] {
        records.keys.sorted().map { app in
            let r = records[app]!
            return SavedState(app: app, version: r.version, savedAt: r.savedAt, paths: r.entries.count,
                              failedLaunches: r.failedLaunches, continueWith: r.continueWith?.rawValue)
        }
    }

    /// A session ended: a launch it was making failed.
    func sessionEnded(_ token: String) {
        for (app, var r) in records where r.sessionEnded(token) {
            records[app] = r
            write(app, r)
        }
    }

    /// State an app marked to go with `activity` when another workstation continues it.
    /// `activity` as it goes to a peer (a fetch, a kept offer): with the state its app
    /// marked to go along, if that still fits the activity cap; as it is otherwise.
    func attached(to activity: Activity, limits: ActivityLimits) -> Activity {
        guard let state = attachment(for: activity.id) else { return activity }
        var with = activity
        with.userInfo[PeerService.restorationKey] = state
        return ActivityPropertyList.encodedSize(of: with) <= limits.maximumEncodedBytes ? with : activity
    }

    func attachment(for activity: ActivityID) -> PropertyValue? {
        guard let (app, r) = records.first(where: { $0.value.continueWith == activity }),
              let entries = try? TypedJSON.decode(dictionary: r.entries, path: "entries") else { return nil }
        return .dictionary(["app": .string(app), "version": .string(r.version), "entries": .dictionary(entries)])
    }

    // MARK: Files

    private func path(_ app: String) -> String { "\(directory)/\(app).json" }

    /// Queued (see `StateWriter.write`), and not awaited by the request: a launch's progress
    /// is kept in memory whatever the disk does (a failed save is logged, and the doctor
    /// reports it).
    private func write(_ app: String, _ r: RestorationRecord) {
        StateWriter.shared.write(RestorationStore.json(r).serializedBytes(), to: path(app), holdingTheRequest: false)
    }

    private func remove(_ app: String) {
        records[app] = nil
        // Queued behind any write of the same file still being flushed, which would put it back.
        StateWriter.shared.remove(path(app))
    }

    static func json(_ r: RestorationRecord) -> JSONValue {
        .object([
            "version": .string(r.version), "savedAt": .string(r.savedAt.rfc3339), "entries": .object(r.entries),
            "continueWith": r.continueWith.map { .string($0.rawValue) } ?? .null,
            "launchStarted": r.launchStarted.map { .string($0.rfc3339) } ?? .null,
            "launchSession": r.launchSession.map(JSONValue.string) ?? .null, "failedLaunches": .integer(Int64(r.failedLaunches)),
        ])
    }

    /// Reads every app's file; one that cannot be read is renamed aside (kept, logged).
    static func load(_ directory: String, logger: Logger) -> [String: RestorationRecord] {
        var out: [String: RestorationRecord] = [:]
        for name in AtomicFile.names(in: directory) {
            guard name.hasSuffix(".json") else { continue }
            let app = String(name.dropLast(5))
            let file = directory + "/" + name
            do {
                try RestorationRecord.validateApp(app)
                guard let bytes = try AtomicFile.read(file, limit: RestorationRecord.maximumEncodedBytes) else { continue }
                let o = try JSONValue(parsing: bytes).objectValue ?? [:]
                var r = JSONFieldReader(o)
                var record = RestorationRecord(
                    version: try r.requiredString("version"), savedAt: try r.timestamp("savedAt") ?? Timestamp(seconds: 0),
                    entries: try r.object("entries") ?? [:], continueWith: try r.string("continueWith").flatMap(ActivityID.init))
                record.launchStarted = try r.timestamp("launchStarted")
                record.launchSession = try r.string("launchSession")
                record.failedLaunches = Int(try r.integer("failedLaunches") ?? 0)
                try RestorationRecord.validate(entries: record.entries)
                out[app] = record
            } catch {
                let aside = AtomicFile.keepAside(file, stamped: false)
                logger.error("restoration state unreadable; kept aside", metadata: ["file": "\(file)", "kept": "\(aside)", "error": "\(error)"])
            }
        }
        return out
    }
}
