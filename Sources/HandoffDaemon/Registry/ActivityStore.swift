import HandoffCore
import Logging

/// What survives a restart: the daemon-owned activities, and which one was current.
public struct SavedActivities: Sendable, Equatable {
    public var activities: [SavedActivity]

    public init(activities: [SavedActivity]) { self.activities = activities }
}

public struct SavedActivity: Sendable, Equatable {
    public var activity: Activity
    public var current: Bool
    /// The file its continuation streams serve (`--stream-file`).
    public var streamFile: String?
    /// The local file of its document.
    public var documentFile: String?
    /// Offered to these workstations only (`--to`); empty: to all.
    public var targets: [DeviceID] = []

    public init(activity: Activity, current: Bool, streamFile: String? = nil, documentFile: String? = nil, targets: [DeviceID] = []) {
        self.targets = targets
        self.activity = activity
        self.current = current
        self.streamFile = streamFile
        self.documentFile = documentFile
    }
}

/// `activities.json` in the state directory, written atomically on every change.
/// The same typed JSON as the API, so a person can read it.
public struct ActivityStore: Sendable {
    public let path: String

    static let fileName = "activities.json"

    /// Who carries out its writes (one for the daemon; a test may bring its own).
    let writer: StateWriter

    public init(stateDirectory: String) {
        self.init(stateDirectory: stateDirectory, writer: .shared)
    }

    init(stateDirectory: String, writer: StateWriter) {
        path = stateDirectory + "/" + Self.fileName
        self.writer = writer
    }

    /// Queues the saving of `saved` (see `StateWriter.write`).
    func save(_ saved: SavedActivities, holdingTheRequest: Bool = true) {
        writer.write(Self.bytes(saved), to: path, holdingTheRequest: holdingTheRequest)
    }

    /// Writes `saved` ahead of the change it describes (`StateWriter.writeAhead`).
    nonisolated(nonsending) func writeAhead(_ saved: SavedActivities, claim: StateWriter.AheadClaim) async throws -> Bool {
        try await writer.writeAhead(Self.bytes(saved), to: path, claim: claim)
    }

    static func bytes(_ saved: SavedActivities) -> [UInt8] {
        let list: [JSONValue] = saved.activities.map { s in
            var o = ActivityJSON.encode(s.activity)
            o["current"] = .bool(s.current)
            if let f = s.streamFile { o["streamFile"] = .string(f) }
            if let f = s.documentFile { o["documentFile"] = .string(f) }
            if !s.targets.isEmpty { o["targets"] = .array(s.targets.map { .string($0.description) }) }
            return .object(o)
        }
        let doc: JSONValue = .object(["version": .integer(1), "activities": .array(list)])
        return doc.serializedBytes(pretty: true) + [UInt8(ascii: "\n")]
    }

    /// A damaged file is kept aside (`activities.json.unreadable-TIME`, for the user and
    /// `handoffctl doctor`) and logged, never fatal: what can still be read of it is kept,
    /// an activity that fails the checks is dropped.
    func load(logger: Logger) -> SavedActivities {
        var out: [SavedActivity] = []
        var problem: String?
        do {
            guard let bytes = try AtomicFile.read(path) else { return SavedActivities(activities: []) }
            let doc = try JSONValue(parsing: bytes)
            guard case .array(let list)? = doc.objectValue?["activities"] else {
                throw ValidationError(field: "activities", problem: "missing")
            }
            for (i, item) in list.enumerated() {
                do {
                    guard let o = item.objectValue else { throw ValidationError(field: "activities[\(i)]", problem: "not an object") }
                    let a = try ActivityJSON.decodeActivity(o)
                    // A target that does not read is dropped with the activity: offered to all
                    // instead would show it where it was not meant to be.
                    var targets: [DeviceID] = []
                    if case .array(let list)? = o["targets"] {
                        for t in list {
                            guard let text = t.stringValue, let id = try? DeviceID(parsing: text) else {
                                throw ValidationError(field: "activities[\(i)].targets", problem: "not a device ID")
                            }
                            targets.append(id)
                        }
                    }
                    out.append(SavedActivity(activity: a, current: o["current"] == .bool(true), streamFile: o["streamFile"]?.stringValue,
                                             documentFile: o["documentFile"]?.stringValue, targets: targets))
                } catch {
                    problem = problem ?? "activities[\(i)]: \(error)"
                }
            }
        } catch {
            problem = "\(error)"
        }
        if let problem {
            let aside = AtomicFile.keepAside(path)
            logger.error("saved activities could not all be read; the file is kept aside", metadata: [
                "file": "\(aside)", "error": "\(problem)", "kept-activities": "\(out.count)"])
            // What could be read is saved again at once, or the next start would lose it.
            if !out.isEmpty { save(SavedActivities(activities: out)) }
        }
        return SavedActivities(activities: out)
    }
}

#if canImport(Glibc)
import Glibc
#endif
