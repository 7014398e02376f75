import HandoffCore

/// `POST /v1/sleep`: what the session agent tells handoffd about the workstation's sleep
/// (Docs/LocalAPI.md §22). The agent holds logind's delay lock (it links GIO; handoffd
/// does not): `guarded` once it holds it (bound to the agent's event session, so it ends
/// with the agent), `unguarded` with why it cannot (no system bus, no logind), `prepare`
/// just before sleep (handoffd saves the current offer and hands it to the members linked
/// now, then answers; the agent releases the lock), `resume` after it (handoffd links
/// again at once).
public struct SleepRequest: Sendable, Equatable {
    public enum Phase: String, Sendable, CaseIterable {
        case guarded, unguarded, prepare, resume
    }

    public var phase: Phase
    /// Why sleep is not guarded (`unguarded`), for `handoffctl doctor`.
    public var detail: String?
    /// The event session of the agent that holds the lock (`guarded`); else the
    /// X-Handoff-Session header.
    public var session: String?

    public init(phase: Phase, detail: String? = nil, session: String? = nil) {
        self.phase = phase
        self.detail = detail
        self.session = session
    }

    public var json: JSONValue {
        var o: JSONObject = ["phase": .string(phase.rawValue)]
        if let detail { o["detail"] = .string(detail) }
        if let session { o["session"] = .string(session) }
        return .object(o)
    }

    public init(body: JSONObject) throws(HandoffError) {
        (phase, detail, session) = try RequestBody.read(body) { r throws(ValidationError) in
            let text = try r.requiredString("phase")
            guard let phase = Phase(rawValue: text) else {
                throw ValidationError(field: "body.phase", problem: "must be one of \(Phase.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(text)\"")
            }
            return (phase, try r.string("detail"), try r.string("session"))
        }
    }
}

/// The answer to `POST /v1/sleep`: for `prepare`, whether something was offered and how
/// many members were handed it to keep.
public struct SleepAnswer: Sendable, Equatable {
    public var phase: SleepRequest.Phase
    public var offered: Bool
    public var handedTo: Int

    public init(phase: SleepRequest.Phase, offered: Bool = false, handedTo: Int = 0) {
        self.phase = phase
        self.offered = offered
        self.handedTo = handedTo
    }

    public var json: JSONValue {
        .object(["phase": .string(phase.rawValue), "offered": .bool(offered), "handedTo": .integer(Int64(handedTo))])
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue, let text = o["phase"]?.stringValue, let phase = SleepRequest.Phase(rawValue: text) else {
            throw ValidationError(field: "phase", problem: "missing or unknown")
        }
        self.phase = phase
        offered = o["offered"]?.boolValue ?? false
        handedTo = Int(o["handedTo"]?.integerValue ?? 0)
    }
}
