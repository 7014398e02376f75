import Foundation
import HandoffCore
import HandoffControlAPI
import Testing

/// The local API's routes and bodies are written once, in HandoffControlAPI: the client
/// writes what handoffd reads with the same type, and LocalAPI.md lists the same routes.
@Suite("Control messages")
struct ControlMessageTests {
    /// `GET /v1/activities/{id}` → "GET /v1/activities/{}": parameter names differ in prose.
    static func normalised(_ method: String, _ path: String) -> String {
        let bare = path.prefix { $0 != "?" }
        let segments = bare.split(separator: "/").map { $0.first == "{" ? "{}" : String($0) }
        return method + " /" + segments.joined(separator: "/")
    }

    /// Every row of LocalAPI.md §6's route table, normalised.
    static func documentedRoutes() throws -> Set<String> {
        let docs = String(#filePath.split(separator: "/").dropLast(3).joined(separator: "/"))
        let text = try String(contentsOfFile: "/" + docs + "/Docs/LocalAPI.md", encoding: .utf8)
        var routes = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.dropFirst(3).prefix { $0 != "`" }
            let parts = cell.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(String(parts[0])), parts[1].hasPrefix("/v1/") else { continue }
            routes.insert(normalised(String(parts[0]), String(parts[1])))
        }
        return routes
    }

    @Test func everyRouteIsDocumentedAndNothingElse() throws {
        let documented = try Self.documentedRoutes()
        let built = Set(ControlEndpoint.allCases.map { Self.normalised($0.method, $0.route.pattern) })
        #expect(built.subtracting(documented).sorted() == [], "routes handoffd serves that LocalAPI.md §6 does not list")
        #expect(documented.subtracting(built).sorted() == [], "routes LocalAPI.md §6 lists that handoffd does not serve")
    }

    @Test func everyPathMatchesItsEndpoint() {
        for e in ControlEndpoint.allCases {
            let takesParameter = e.route.pattern.contains("{")
            let parameter = takesParameter ? "0123456789abcdef0123456789abcdef" : ""
            #expect(ControlEndpoint.match(method: e.method, path: e.path(parameter)) == .endpoint(e, parameter), "\(e)")
        }
        #expect(ControlEndpoint.match(method: "GET", path: "/v1/activities/current") == .endpoint(.getActivity, "current"))
        #expect(ControlEndpoint.match(method: "PUT", path: "/v1/status") == .methodNotAllowed)
        #expect(ControlEndpoint.match(method: "GET", path: "/v1/nothing") == .notFound)
        #expect(ControlEndpoint.match(method: "GET", path: "/v1/activities/a/b/c") == .notFound)
        #expect(ControlEndpoint.match(method: "GET", path: "//v1//status/") == .endpoint(.status, ""), "empty segments are ignored, as before")
    }

    /// What the client writes, handoffd reads back as the same request.
    @Test func requestsRoundTrip() throws {
        func body(_ v: JSONValue) throws -> JSONObject { try #require(try json(v.serialized()).objectValue) }
        for r in [TrustRequest(deviceID: "ABCDEFG-1"), TrustRequest(deviceID: "X", name: "desk", address: "10.0.0.2:4242")] {
            #expect(try TrustRequest(body: body(r.json)) == r)
        }
        #expect(try DeviceRequest(body: body(DeviceRequest(deviceID: "ABCDEFG-1").json)) == DeviceRequest(deviceID: "ABCDEFG-1"))
        for r in [ContinueRequest(), ContinueRequest(from: "desk", type: "t", id: "i", launch: true)] {
            #expect(try ContinueRequest(body: body(r.json)) == r)
        }
        for r in [SaveStateRequest(version: "1", entries: ["a": .integer(1)]), SaveStateRequest(version: "2", entries: [:], continueWith: "current")] {
            #expect(try SaveStateRequest(body: body(r.json)) == r)
        }
        for r in [RestoreStateRequest(version: "1"), RestoreStateRequest(version: "1", acceptOlder: true, session: "s")] {
            #expect(try RestoreStateRequest(body: body(r.json)) == r)
        }
        for r in [OpenPairingRequest(), OpenPairingRequest(address: "10.0.0.2:4242")] { #expect(try OpenPairingRequest(body: body(r.json)) == r) }
        #expect(try ConfirmPairingRequest(body: body(ConfirmPairingRequest(code: "123456").json)) == ConfirmPairingRequest(code: "123456"))
        for r in [ClaimLauncherRequest(session: nil), ClaimLauncherRequest(session: "s")] { #expect(try ClaimLauncherRequest(body: body(r.json)) == r) }
        for r in [SetSourceRequest(enabled: true), SetSourceRequest(enabled: false)] { #expect(try SetSourceRequest(body: body(r.json)) == r) }
        for r in [RefuseStreamRequest(), RefuseStreamRequest(reason: "busy")] { #expect(try RefuseStreamRequest(body: body(r.json)) == r) }
        for r in [ForgetKeptRequest(), ForgetKeptRequest(device: "ws-a")] { #expect(try ForgetKeptRequest(body: body(r.json)) == r) }
        for r in [SleepRequest(phase: .prepare), SleepRequest(phase: .guarded, session: "s"), SleepRequest(phase: .unguarded, detail: "no logind")] {
            #expect(try SleepRequest(body: body(r.json)) == r)
        }
        let answers = [SourcesAnswer(.success([DesktopSource(name: "media", enabled: true, detail: "2 players")])),
                       SourcesAnswer(.failure(SourceChangeError(code: "settings_unwritable", message: "read-only")))]
        for a in answers { #expect(try SourcesAnswer(body: body(a.json)) == a) }
        var draft = ActivityDraft(activityType: "org.example.edit")
        draft.title = "notes"
        let become = BecomeCurrentRequest(draft: draft, session: "s", streamFile: "/tmp/f", document: "/tmp/d")
        let back = try BecomeCurrentRequest(body: body(become.json))
        #expect(back.session == "s" && back.streamFile == "/tmp/f" && back.document == "/tmp/d" && back.draft.title == "notes")
    }

    /// A bad body is refused with the field named, as LocalAPI.md §3 says.
    @Test func badBodiesAreRefusedNamingTheField() {
        func refusal(_ make: () throws(HandoffError) -> Void) -> HandoffError? {
            do { try make(); return nil } catch { return error }
        }
        let cases: [(HandoffError?, String, String)] = [
            (refusal { () throws(HandoffError) in _ = try TrustRequest(body: [:]) }, "bad_request", "body.deviceID: is required"),
            (refusal { () throws(HandoffError) in _ = try TrustRequest(body: ["deviceID": .string("X"), "frm": .string("y")]) }, "bad_request", "body.frm: unknown field"),
            (refusal { () throws(HandoffError) in _ = try ContinueRequest(body: ["launch": .string("yes")]) }, "bad_request", "body.launch: must be true or false, not string"),
            (refusal { () throws(HandoffError) in _ = try ConfirmPairingRequest(body: [:]) }, "bad_request", "say {\"code\": \"123456\"}: the code both screens show"),
            (refusal { () throws(HandoffError) in _ = try SetSourceRequest(body: [:]) }, "bad_request", "say {\"enabled\": true} or {\"enabled\": false}"),
            (refusal { () throws(HandoffError) in _ = try SourcesAnswer(body: ["error": .object([:])]) }, "bad_request", "an error answer is {\"error\": {\"code\", \"message\"}}"),
            (refusal { () throws(HandoffError) in _ = try BecomeCurrentRequest(body: ["activityType": .string("t"), "session": .integer(1)]) }, "bad_request", "session must be a string"),
            (refusal { () throws(HandoffError) in _ = try BecomeCurrentRequest(body: ["activityType": .integer(1)]) }, "invalid_activity", "activityType: must be a string, not integer"),
            (refusal { () throws(HandoffError) in _ = try SleepRequest(body: ["phase": .string("nap")]) }, "bad_request", "body.phase: must be one of guarded, unguarded, prepare, resume, not \"nap\""),
        ]
        for (error, code, message) in cases {
            #expect(error?.code == code && error?.message == message, "\(String(describing: error))")
        }
    }

    @Test func responsesRoundTrip() throws {
        #expect(try Identity(json: Identity(deviceID: "ABCDEFG-1", name: "desk").json) == Identity(deviceID: "ABCDEFG-1", name: "desk"))
        for c in [TrustChange(deviceID: "X", name: "desk", trusted: true), TrustChange(deviceID: "X", trusted: false),
                  TrustChange(deviceID: "X", name: "old", trusted: false, removed: true)] {
            #expect(try TrustChange(json: c.json) == c)
        }
        let states = [RestoredState(state: nil, reason: "none_saved"),
                      RestoredState(state: ["a": .integer(1)], savedVersion: "2", savedAt: Timestamp(rfc3339: "2026-11-23T10:00:00Z"), older: true)]
        for s in states { #expect(RestoredState(json: s.json) == s) }
        let saved = [SavedState(app: "org.example.Editor", version: "1", savedAt: Timestamp(seconds: 1_800_000_000, nanoseconds: 0), paths: 3, failedLaunches: 1, continueWith: nil)]
        #expect(try SavedState.list(json: SavedState.listJSON(saved)) == saved)
        let roots = [SyncedRoot(kind: "syncthing", id: "abcd-1234", path: "/home/ann/Sync")]
        #expect(SyncedRoot.list(json: SyncedRoot.listJSON(roots)) == roots)
        let doc = ContinuedDocument(path: "notes/a.txt", size: 12, sha256: String(repeating: "ab", count: 32), state: "unmapped", localPath: nil,
                                    reason: "not synced here", root: .init(kind: "syncthing", id: "abcd-1234"))
        #expect(ContinuedDocument(json: doc.json) == doc)
        #expect(HistoryCleared(json: HistoryCleared(removed: 7).json) == HistoryCleared(removed: 7))
        for a in [SleepAnswer(phase: .prepare, offered: true, handedTo: 2), SleepAnswer(phase: .resume)] { #expect(try SleepAnswer(json: a.json) == a) }
        #expect(try KeptForgotten(json: KeptForgotten(forgotten: 3).json) == KeptForgotten(forgotten: 3))
        let kept = Offer(device: PeerDevice(id: "X", name: "desk"), activity: ActivitySummary(Activity(id: .random(), activityType: "t", title: "", createdAt: Timestamp(seconds: 1), origin: DeviceRef(name: "desk")), payloadSize: 1),
                         ageSeconds: 2, kept: true, stale: true)
        #expect(try Offer(json: kept.json) == kept)
        #expect(Acknowledgement.saved(app: "a").json == .object(["app": .string("a"), "saved": .bool(true)]))
        #expect(Acknowledgement.launcher(session: "s").json == .object(["launcher": .bool(true), "session": .string("s")]))
        // Keys in the order handoffd has always written them.
        #expect(TrustChange(deviceID: "X", name: "n", trusted: false, removed: true).json.serialized() == #"{"id":"X","name":"n","removed":true,"trusted":false}"#)
    }
}
