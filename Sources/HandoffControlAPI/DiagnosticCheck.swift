import HandoffCore

/// One finding of `handoffctl doctor` (Docs/LocalAPI.md §21): what was checked, how it
/// stands, what was seen, and what to do about it.
public struct DiagnosticCheck: Sendable, Equatable {
    public enum Status: String, Sendable, Comparable {
        case ok, warning, failed
        public static func < (l: Status, r: Status) -> Bool { l.rank < r.rank }
        private var rank: Int { switch self { case .ok: 0; case .warning: 1; case .failed: 2 } }
    }

    /// Stable, for scripts: `daemon`, `socket`, `units`, `discovery`, `interface.wlan0`,
    /// `firewall`, `peer.DEVICEID`, `clock.DEVICEID`, `identity`, `state-files`.
    public var id: String
    public var status: Status
    public var title: String
    public var detail: String
    /// A command or step that fixes it; nil when nothing needs doing.
    public var fix: String?

    public init(_ id: String, _ status: Status, _ title: String, _ detail: String, fix: String? = nil) {
        self.id = id
        self.status = status
        self.title = title
        self.detail = detail
        self.fix = fix
    }

    public var json: JSONValue {
        .object(["id": .string(id), "status": .string(status.rawValue), "title": .string(title), "detail": .string(detail),
                 "fix": fix.map(JSONValue.string) ?? .null])
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "check", problem: "is not an object") }
        var r = JSONFieldReader(o)
        id = try r.requiredString("id")
        guard let s = Status(rawValue: try r.requiredString("status")) else { throw ValidationError(field: "status", problem: "is not ok, warning or failed") }
        status = s
        title = try r.string("title") ?? ""
        detail = try r.string("detail") ?? ""
        fix = try r.string("fix")
    }

    public static func listJSON(_ checks: [DiagnosticCheck]) -> JSONValue { .object(["checks": .array(checks.map(\.json))]) }

    public static func list(json: JSONValue) throws(ValidationError) -> [DiagnosticCheck] {
        guard case .array(let items)? = json.objectValue?["checks"] else { throw ValidationError(field: "checks", problem: "is required") }
        var out: [DiagnosticCheck] = []
        for item in items { out.append(try DiagnosticCheck(json: item)) }
        return out
    }
}
