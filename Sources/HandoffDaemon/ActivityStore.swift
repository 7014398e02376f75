import HandoffCore
import HandoffWire
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

    public init(activity: Activity, current: Bool, streamFile: String? = nil, documentFile: String? = nil) {
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

    public init(stateDirectory: String) {
        path = stateDirectory + "/activities.json"
    }

    func save(_ saved: SavedActivities) throws {
        let list: [JSONValue] = saved.activities.map { s in
            var o = ActivityJSON.encode(s.activity)
            o["current"] = .bool(s.current)
            if let f = s.streamFile { o["streamFile"] = .string(f) }
            if let f = s.documentFile { o["documentFile"] = .string(f) }
            return .object(o)
        }
        let doc: JSONValue = .object(["version": .integer(1), "activities": .array(list)])
        try AtomicFile.write(Array((doc.prettySerialized() + "\n").utf8), to: path)
    }

    /// A damaged file is set aside (renamed `.corrupt`) and logged, never fatal.
    func load(logger: Logger) -> SavedActivities {
        do {
            guard let bytes = try AtomicFile.read(path) else { return SavedActivities(activities: []) }
            let doc = try JSONValue(parsing: bytes)
            guard case .array(let list)? = doc.objectValue?["activities"] else {
                throw ValidationError(field: "activities", problem: "missing")
            }
            var out: [SavedActivity] = []
            for item in list {
                guard let o = item.objectValue else { continue }
                let a = try ActivityJSON.decodeActivity(o)
                out.append(SavedActivity(activity: a, current: o["current"] == .bool(true), streamFile: o["streamFile"]?.stringValue,
                                         documentFile: o["documentFile"]?.stringValue))
            }
            return SavedActivities(activities: out)
        } catch {
            let aside = path + ".corrupt"
            _ = rename(path, aside)
            logger.error("saved activities could not be read; set aside", metadata: ["file": "\(aside)", "error": "\(error)"])
            return SavedActivities(activities: [])
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
