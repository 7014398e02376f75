import HandoffCore

/// The answer of a route that only does something: what it acted on, and what it did,
/// `{"app": "org.example.Editor", "saved": true}`.
public struct Acknowledgement: Sendable, Equatable {
    /// The key naming what was acted on (`app`, `launchID`, `requestID`, `streamID`, `session`) and its value.
    public var subjectKey: String
    public var subject: String
    /// What happened to it (`saved`, `restored`, `discarded`, `answered`, `refused`, `launcher`).
    public var done: String
    /// `done` before the subject: the order the launcher route has always answered in.
    public var doneFirst = false

    public init(_ subjectKey: String, _ subject: String, _ done: String) {
        self.subjectKey = subjectKey
        self.subject = subject
        self.done = done
    }

    public static func saved(app: String) -> Self { Self("app", app, "saved") }
    public static func restored(app: String) -> Self { Self("app", app, "restored") }
    public static func discarded(app: String) -> Self { Self("app", app, "discarded") }
    public static func answered(launch id: String) -> Self { Self("launchID", id, "answered") }
    public static func answered(sources id: String) -> Self { Self("requestID", id, "answered") }
    public static func refused(stream id: String) -> Self { Self("streamID", id, "refused") }
    /// Keys in the order the API has always sent them: `launcher` first.
    public static func launcher(session: String) -> Self {
        var a = Self("session", session, "launcher")
        a.doneFirst = true
        return a
    }

    public var json: JSONValue {
        doneFirst
            ? .object([done: .bool(true), subjectKey: .string(subject)])
            : .object([subjectKey: .string(subject), done: .bool(true)])
    }
}
