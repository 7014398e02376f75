import HandoffCore
import HandoffControlAPI
import Testing

/// Encodes to a JSON line and reads it back, as the event stream does.
private func overTheWire(_ e: ControlEvent) throws -> ControlEvent {
    let line = e.json.serialized()
    #expect(!line.contains("\n"))
    return try ControlEvent(json: try json(line))
}

private func record(state: ActivityState = .current, owner: String = "session", stale: Bool? = nil) -> ActivityRecord {
    let a = everyFieldActivity()
    return ActivityRecord(activity: a, state: state, owner: owner, payloadSize: ActivityPropertyList.encodedSize(of: a), stale: stale)
}

@Suite("Control events")
struct ControlEventTests {
    @Test func knownEventsRoundTrip() throws {
        let id = ActivityID("0123456789abcdef0123456789abcdef")!
        let events: [ControlEvent] = [
            .session(token: "tok-123"),
            .becameCurrent(record()),
            .resigned(record(state: .resigned)),
            .updated(record(stale: true)),
            .updated(record(stale: false)),
            .invalidated(record(state: .invalidated, owner: "daemon"), reason: "replaced by another activity"),
            .invalidated(record(state: .invalidated), reason: ""),
            .expired(record(state: .expired)),
            .willSave(activityID: id, saveID: "save-1"),
            .sourcesRequested(requestID: "r1", change: nil),
            .sourcesRequested(requestID: "r2", change: DesktopSourceChange(source: "media", enabled: false)),
        ]
        for e in events {
            #expect(try overTheWire(e) == e, "\(e.name)")
            #expect(try ControlEvent(json: try json(e.json.prettySerialized())) == e, "\(e.name)")
        }
    }

    @Test func eventNamesAndShapes() {
        let id = ActivityID("0123456789abcdef0123456789abcdef")!
        #expect(ControlEvent.session(token: "t").json == .object(["event": .string("session"), "session": .string("t")]))
        #expect(ControlEvent.willSave(activityID: id, saveID: "s").json
            == .object(["event": .string("will-save"), "activityID": .string(id.rawValue), "saveID": .string("s")]))
        #expect(ControlEvent.becameCurrent(record()).name == "became-current")
        #expect(ControlEvent.resigned(record()).name == "resigned")
        #expect(ControlEvent.updated(record()).name == "updated")
        #expect(ControlEvent.invalidated(record(), reason: "r").name == "invalidated")
        #expect(ControlEvent.expired(record()).name == "expired")
        let inv = ControlEvent.invalidated(record(), reason: "why").json.objectValue
        #expect(inv?.keys == ["event", "activity", "reason"])
        #expect(inv?["reason"] == .string("why"))
        #expect(inv?["activity"] == record().json)
    }

    @Test func unknownEventsAreKeptWhole() throws {
        let text = #"{"event":"peer-found","peer":{"name":"desk","id":"abc"},"rssi":-40,"tags":["a",1.5,null]}"#
        let e = try ControlEvent(json: try json(text))
        guard case .other(let name, let body) = e else {
            Issue.record("expected .other, got \(e)")
            return
        }
        #expect(name == "peer-found")
        #expect(e.name == "peer-found")
        #expect(body["peer"] == .object(["name": .string("desk"), "id": .string("abc")]))
        #expect(body["rssi"] == .integer(-40))
        // Re-encoding gives the same line back, fields and order intact.
        #expect(e.json.serialized() == text)
        #expect(try overTheWire(e) == e)
    }

    @Test func unknownEventWithEventFieldLaterKeepsAllFields() throws {
        let e = try ControlEvent(json: try json(#"{"a":1,"event":"future","b":{"c":[]}}"#))
        let o = try #require(e.json.objectValue)
        #expect(Set(o.keys) == ["event", "a", "b"])
        #expect(o["event"] == .string("future"))
        #expect(o["a"] == .integer(1))
        #expect(o["b"] == .object(["c": .array([])]))
    }

    @Test func constructedOtherEventEncodesItsFields() {
        let e = ControlEvent.other(name: "peer-lost", body: ["peer": .string("desk"), "event": .string("ignored")])
        #expect(e.json == .object(["event": .string("peer-lost"), "peer": .string("desk")]))
    }

    @Test(arguments: [
        #"{}"#, #"[]"#, #""session""#, #"{"event": 1}"#, #"{"event": null}"#, #"{"session": "t"}"#,
        #"{"event": "session"}"#, #"{"event": "session", "session": 5}"#,
        #"{"event": "became-current"}"#, #"{"event": "updated", "activity": {}}"#, #"{"event": "resigned", "activity": []}"#,
        #"{"event": "will-save", "saveID": "s"}"#, #"{"event": "will-save", "activityID": "nothex", "saveID": "s"}"#,
        #"{"event": "will-save", "activityID": "0123456789abcdef0123456789abcdef"}"#,
    ])
    func malformedKnownEventsAreErrors(_ text: String) {
        #expect(throws: ValidationError.self, "\(text)") { try ControlEvent(json: try json(text)) }
    }
}

@Suite("Activity records")
struct ActivityRecordTests {
    @Test(arguments: [ActivityState.current, .resigned, .invalidated, .expired])
    func roundTrip(_ state: ActivityState) throws {
        for stale: Bool? in [nil, true, false] {
            let r = record(state: state, owner: "daemon", stale: stale)
            #expect(try ActivityRecord(json: try json(r.json.serialized())) == r)
        }
    }

    @Test func jsonAddsStateOwnerPayloadSizeAndStale() throws {
        let r = record(state: .resigned, owner: "session", stale: true)
        let o = try #require(r.json.objectValue)
        #expect(o["state"] == .string("resigned"))
        #expect(o["owner"] == .string("session"))
        #expect(o["payloadSize"] == .integer(Int64(r.payloadSize)))
        #expect(o["stale"] == .bool(true))
        #expect(record(stale: nil).json.objectValue?["stale"] == nil)
        // The activity's own fields come first, unchanged.
        let own = ActivityJSON.encode(r.activity).keys
        #expect(Array(o.keys.prefix(own.count)) == own)
    }

    @Test func defaultsForMissingFields() throws {
        let r = try ActivityRecord(json: .object(ActivityJSON.encode(everyFieldActivity())))
        #expect(r.state == .current)
        #expect(r.owner == "daemon")
        #expect(r.payloadSize == 0)
        #expect(r.stale == nil)
        #expect(r.activity == everyFieldActivity())
    }

    @Test func notAnObject() {
        #expect(throws: ValidationError.self) { try ActivityRecord(json: .array([])) }
        #expect(throws: ValidationError.self) { try ActivityRecord(json: .object(["id": .string("nope")])) }
    }

    @Test func ownerLabels() {
        #expect(ActivityOwner.daemon.label == "daemon")
        #expect(ActivityOwner.session("abc").label == "session")
    }

    @Test func eventLineForAValidActivityParsesBack() throws {
        // Validation allows `maximumNesting` levels of userInfo nesting; the JSON an event
        // carries for such an activity must stay within the parser's depth limit.
        let limits = ActivityLimits()
        var set = PropertyValue.set([])
        for _ in 1..<limits.maximumNesting { set = .set([set]) }
        var array = PropertyValue.array([])
        for _ in 1..<limits.maximumNesting { array = .array([array]) }
        var a = everyFieldActivity()
        a.userInfo = ["arrays": array]
        try ActivityValidation.validate(a, limits: limits)
        let arrays = ControlEvent.updated(ActivityRecord(activity: a, state: .current, owner: "daemon", payloadSize: 1))
        #expect(try overTheWire(arrays) == arrays)

        a.userInfo = ["sets": set]
        try ActivityValidation.validate(a, limits: limits)
        let sets = ControlEvent.updated(ActivityRecord(activity: a, state: .current, owner: "daemon", payloadSize: 1))
        #expect(throws: Never.self) { try JSONValue(parsing: JSONValue.object(ActivityJSON.encode(a)).serialized()) }
        #expect(throws: Never.self) { try overTheWire(sets) }
    }
}

@Suite("API errors")
struct APIErrorTests {
    @Test func shapeAndRoundTrip() throws {
        let e = APIError(status: 422, code: "invalid_activity", message: "activityType: is required \"quoted\"\n")
        #expect(e.json == .object(["error": .object(["code": .string("invalid_activity"), "message": .string("activityType: is required \"quoted\"\n")])]))
        #expect(e.description == e.message)
        let back = APIError(status: 422, body: try json(e.json.serialized()))
        #expect(back == e)
    }

    @Test func statusComesFromTheResponse() throws {
        let back = APIError(status: 500, body: try json(#"{"error": {"code": "x", "message": "y", "extra": 1}, "more": true}"#))
        #expect(back == APIError(status: 500, code: "x", message: "y"))
    }

    @Test(arguments: [
        #"{}"#, #"[]"#, #"null"#, #""error""#, #"{"error": "boom"}"#, #"{"error": {"code": "x"}}"#, #"{"error": {"message": "y"}}"#,
        #"{"error": {"code": 1, "message": "y"}}"#, #"{"error": {"code": "x", "message": null}}"#,
    ])
    func notAnErrorBody(_ text: String) throws {
        #expect(APIError(status: 400, body: try json(text)) == nil)
    }

    @Test func factories() throws {
        let id = ActivityID("0123456789abcdef0123456789abcdef")!
        let parse = try #require(#expect(throws: JSONParseError.self) { try json("[1,") })
        // Domain failures get their status where the local API answers (APIError.init(_:)).
        let cases: [(APIError, Int, String)] = [
            (APIError(HandoffError.invalidJSON(parse)), 400, "invalid_json"),
            (APIError(HandoffError.invalid(ValidationError(field: "f", problem: "p"))), 422, "invalid_activity"),
            (APIError(HandoffError.badRequest("m")), 400, "bad_request"),
            (APIError(HandoffError.notFound("m")), 404, "not_found"),
            (APIError(HandoffError.invalidated(id)), 410, "invalidated"),
            (APIError(HandoffError.expired(id)), 410, "expired"),
            (APIError(HandoffError.noCurrent()), 404, "no_current_activity"),
            (.tooLarge(1024), 413, "body_too_large"),
            (.methodNotAllowed("PUT", "/v1/status"), 405, "method_not_allowed"),
            (APIError(HandoffError.unknownSession("tok")), 409, "unknown_session"),
        ]
        for (e, status, code) in cases {
            #expect(e.status == status, "\(code)")
            #expect(e.code == code)
            #expect(!e.message.isEmpty)
            #expect(APIError(status: status, body: e.json) == e)
        }
        #expect(HandoffError.invalidJSON(parse).message == "invalid JSON at byte 3: unexpected end of input")
        #expect(HandoffError.invalid(ValidationError(field: "f", problem: "p")).message == "f: p")
        #expect(HandoffError.invalidated(id).message.contains(id.rawValue))
        #expect(APIError.tooLarge(1024).message.contains("1024"))
        #expect(APIError.tooLarge(1024).message.contains("continuation stream"))
        #expect(APIError.methodNotAllowed("PUT", "/v1/status").message.contains("PUT"))
        #expect(HandoffError.unknownSession("tok").message.contains("tok"))
    }

    @Test func everyKindOfFailureHasItsOwnStatus() {
        let statuses = HandoffError.Kind.allCases.map(APIError.status(of:))
        #expect(Set(statuses).count == HandoffError.Kind.allCases.count, "two kinds would be told apart by nobody")
        #expect(statuses.allSatisfy { (400..<600).contains($0) })
        #expect(APIError.status(of: .peerTimedOut) == 504 && APIError.status(of: .unavailable) == 503)
    }
}

@Suite("Daemon status")
struct DaemonStatusTests {
    static func status(current: ActivityRecord?, deviceID: String?) -> DaemonStatus {
        DaemonStatus(version: "0.1.0", apiVersion: "v1", deviceName: "laptop", deviceID: deviceID, pid: 4242,
                     startedAt: Timestamp(seconds: 1_795_255_200, nanoseconds: 250_000_000), socketPath: "/run/user/1000/handoff/control.sock",
                     current: current, sessions: 3, maximumActivityBytes: 65_536,
                     discoveryAvailable: false, discoveryDetail: "avahi-daemon is not running")
    }

    @Test func roundTrip() throws {
        for s in [
            Self.status(current: record(), deviceID: "dev-1"), Self.status(current: nil, deviceID: nil),
            Self.status(current: record(state: .resigned, owner: "daemon", stale: true), deviceID: nil),
        ] {
            #expect(try DaemonStatus(json: try json(s.json.serialized())) == s)
            #expect(try DaemonStatus(json: try json(s.json.prettySerialized())) == s)
        }
    }

    @Test func shape() throws {
        let o = try #require(Self.status(current: nil, deviceID: nil).json.objectValue)
        #expect(o["device"] == .object(["name": .string("laptop"), "id": .null]))
        #expect(o["current"] == .null)
        #expect(o["startedAt"] == .string("2026-11-21T10:00:00.250Z"))
        #expect(o["discovery"] == .object(["available": .bool(false), "detail": .string("avahi-daemon is not running")]))
        #expect(o["socket"] == .string("/run/user/1000/handoff/control.sock"))
        #expect(o["pid"] == .integer(4242))
        var withDiscovery = Self.status(current: nil, deviceID: nil)
        withDiscovery.discoveryAvailable = true
        #expect(try DaemonStatus(json: withDiscovery.json).discoveryAvailable)
    }

    @Test func toleratesMissingFields() throws {
        let s = try DaemonStatus(json: .object([:]))
        #expect(s.version == "?")
        #expect(s.deviceID == nil)
        #expect(s.current == nil)
        #expect(s.pid == 0)
        #expect(s.startedAt == Timestamp(seconds: 0))
        #expect(!s.discoveryAvailable)
    }

    @Test func rejectsNonObjectsAndBadCurrent() {
        #expect(throws: ValidationError.self) { try DaemonStatus(json: .array([])) }
        #expect(throws: ValidationError.self) { try DaemonStatus(json: .object(["current": .object(["id": .string("x")])])) }
    }

    /// The agent's answer about its sources: strict, bounded.
    @Test func desktopSourceListsAreChecked() throws {
        let list = [DesktopSource(name: "media", enabled: true, detail: "following 1 player")]
        #expect(try DesktopSource.list(json: DesktopSource.listJSON(list)) == list)
        #expect(throws: ValidationError.self) { try DesktopSource.list(json: .object([:])) }
        #expect(throws: ValidationError.self) { try DesktopSource.list(json: .object(["sources": .array([.object(["name": .string("x")])])])) }
        let many = JSONValue.array(Array(repeating: list[0].json, count: 33))
        #expect(throws: ValidationError.self) { try DesktopSource.list(json: .object(["sources": many])) }
        let long = DesktopSource(name: "media", enabled: true, detail: String(repeating: "x", count: 4097))
        #expect(throws: ValidationError.self) { try DesktopSource.list(json: DesktopSource.listJSON([long])) }
    }
}
