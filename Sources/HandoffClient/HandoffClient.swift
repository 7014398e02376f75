import HandoffCore
import HandoffSystem
import HandoffControlAPI
import NIOHTTP1

/// The client library apps use to talk to their local handoffd (and what handoffctl is
/// built on). Every call is one short HTTP exchange on the control socket.
public struct HandoffClient: Sendable {
    public let socketPath: String

    /// `socketPath` defaults to `$HANDOFF_SOCKET`, else `$XDG_RUNTIME_DIR/handoff/handoffd.sock`.
    public init(socketPath: String? = nil) {
        self.socketPath = socketPath ?? DefaultPaths.socket
    }

    public func status() async throws -> DaemonStatus {
        try decode(try await call(.GET, ControlPaths.status), DaemonStatus.init(json:))
    }

    public func activities() async throws -> [ActivityRecord] {
        let body = try await call(.GET, ControlPaths.activities)
        guard case .array(let items)? = body.objectValue?["activities"] else {
            throw HandoffClientError.badResponse("no activities list")
        }
        return try items.map { try decode($0, ActivityRecord.init(json:)) }
    }

    /// Nil when no activity is current.
    public func current() async throws -> ActivityRecord? {
        do {
            return try decode(try await call(.GET, ControlPaths.current), ActivityRecord.init(json:))
        } catch HandoffClientError.api(let e) where e.code == "no_current_activity" {
            return nil
        }
    }

    public func activity(_ id: String) async throws -> ActivityRecord {
        try decode(try await call(.GET, ControlPaths.activity(id)), ActivityRecord.init(json:))
    }

    /// Makes a new activity current. With `session`, it belongs to that event session
    /// and dies with it; without, it belongs to the daemon.
    /// `streamFile` (absolute): a file handoffd serves as the activity's continuation
    /// streams, for an activity without an owning app.
    /// `document` (absolute): the file the activity is about; the other workstation opens
    /// its own copy in the same synced folder, or fetches one.
    public func becomeCurrent(_ draft: ActivityDraft, session: String? = nil, streamFile: String? = nil, document: String? = nil) async throws -> ActivityRecord {
        var body = ActivityJSON.encode(draft)
        if let session { body["session"] = .string(session) }
        if let streamFile { body["streamFile"] = .string(streamFile) }
        if let document { body["document"] = .string(document) }
        return try decode(try await call(.POST, ControlPaths.activities, body: .object(body)), ActivityRecord.init(json:))
    }

    public func becomeCurrent(existing id: String) async throws -> ActivityRecord {
        try decode(try await call(.POST, ControlPaths.activity(id) + "/become-current", body: .object([:])), ActivityRecord.init(json:))
    }

    public func update(_ id: String, _ update: ActivityUpdate) async throws -> ActivityRecord {
        try decode(try await call(.PATCH, ControlPaths.activity(id), body: .object(ActivityJSON.encode(update))), ActivityRecord.init(json:))
    }

    public func resign(_ id: String = "current") async throws -> ActivityRecord {
        try decode(try await call(.POST, ControlPaths.resign(id), body: .object([:])), ActivityRecord.init(json:))
    }

    public func invalidate(_ id: String = "current") async throws -> ActivityRecord {
        try decode(try await call(.POST, ControlPaths.invalidate(id), body: .object([:])), ActivityRecord.init(json:))
    }

    /// The activity with a payload as fresh as its owner can make it (will-save).
    public func snapshot(_ id: String = "current") async throws -> ActivityRecord {
        try decode(try await call(.POST, ControlPaths.snapshot(id), body: .object([:])), ActivityRecord.init(json:))
    }

    // MARK: - Other workstations

    /// This workstation's device ID and name.
    public func identity() async throws -> (deviceID: String, name: String) {
        let o = try await call(.GET, ControlPaths.identity).objectValue
        guard let id = o?["deviceID"]?.stringValue else { throw HandoffClientError.badResponse("no deviceID") }
        return (id, o?["name"]?.stringValue ?? "")
    }

    public func peers() async throws -> [PeerInfo] {
        guard let peers = PeerInfo.list(json: try await call(.GET, ControlPaths.peers)) else {
            throw HandoffClientError.badResponse("no peers list")
        }
        return peers
    }

    @discardableResult
    public func trust(_ deviceID: String, name: String? = nil, address: String? = nil) async throws -> PeerInfo {
        var body: JSONObject = ["deviceID": .string(deviceID)]
        if let name { body["name"] = .string(name) }
        if let address { body["address"] = .string(address) }
        return PeerInfo(json: try await call(.POST, ControlPaths.trust, body: .object(body)))
    }

    public func untrust(_ deviceID: String) async throws {
        _ = try await call(.POST, ControlPaths.untrust, body: .object(["deviceID": .string(deviceID)]))
    }

    /// What trusted, connected workstations offer now.
    public func offers() async throws -> [Offer] {
        try decode(try await call(.GET, ControlPaths.offers), Offer.list(json:))
    }

    /// Continues the most recent offered activity (or the one named): fetches its fresh
    /// payload from the origin, which hears that it was continued.
    /// With `launch`, the session agent then opens it in the app that handles it (or the
    /// web page in the browser) and `launch` in the answer says what it did.
    public func continueActivity(from: String? = nil, type: String? = nil, id: String? = nil, launch: Bool = false) async throws -> ContinuedActivity {
        var body = JSONObject()
        if let from { body["from"] = .string(from) }
        if let type { body["type"] = .string(type) }
        if let id { body["id"] = .string(id) }
        if launch { body["launch"] = .bool(true) }
        return try continued(try await call(.POST, ControlPaths.continueActivity, body: .object(body)))
    }

    /// An activity continued on this workstation lately (what an app launched to continue
    /// it asks for: its id comes in the `handoff:` URI or `HANDOFF_ACTIVITY_ID`).
    public func continuedActivity(_ id: String) async throws -> ContinuedActivity {
        try continued(try await call(.GET, ControlPaths.continued(id)))
    }

    private func continued(_ json: JSONValue) throws -> ContinuedActivity {
        try decode(json, ContinuedActivity.init(json:))
    }

    /// Where a continued activity's document is on this workstation (`GET /v1/continued/{id}/document`).
    public func continuedDocument(_ id: String) async throws -> ContinuedDocument {
        ContinuedDocument(json: try await call(.GET, ControlPaths.continued(id) + "/document"))
    }

    /// The synced folders handoffd knows here, as resolved local paths.
    public func syncedRootPaths() async throws -> [String] {
        guard case .array(let items)? = try await call(.GET, ControlPaths.syncedRoots).objectValue?["roots"] else { return [] }
        return items.compactMap { $0.objectValue?["path"]?.stringValue }
    }

    // MARK: - The session agent's side

    /// Makes `session` (an open event session's token) the one asked to open apps.
    public func claimLauncher(session: String) async throws {
        _ = try await call(.POST, ControlPaths.launcher, body: .object(["session": .string(session)]))
    }

    /// Answers a `launch-requested` event.
    public func answerLaunch(_ launchID: String, _ outcome: LaunchOutcome) async throws {
        _ = try await call(.POST, ControlPaths.launch(launchID), body: outcome.json)
    }

    /// Activities this workstation and its peers offered (those their apps let be
    /// searched), newest first.
    public func history(_ query: HistoryQuery) async throws -> [HistoryEntry] {
        try decode(try await call(.POST, ControlPaths.historySearch, body: query.json), HistoryEntry.list(json:))
    }

    /// Forgets the history; returns how many entries it had.
    @discardableResult
    public func clearHistory() async throws -> Int {
        if case .integer(let n)? = try await call(.DELETE, ControlPaths.history).objectValue?["removed"] { return Int(n) }
        return 0
    }

    /// Opens a history entry's web page or document again (through the session agent).
    public func reopenHistoryEntry(_ id: Int64) async throws -> (HistoryEntry, LaunchOutcome) {
        let json = try await call(.POST, ControlPaths.historyOpen(id))
        let entry = try decode(json.objectValue?["entry"] ?? .null, HistoryEntry.init(json:))
        let launch = try decode(json.objectValue?["launch"] ?? .null, LaunchOutcome.init(json:))
        return (entry, launch)
    }

    /// What handoffd can tell `handoffctl doctor` (Docs/LocalAPI.md §21).
    public func diagnostics() async throws -> [DiagnosticCheck] {
        try decode(try await call(.GET, ControlPaths.diagnostics), DiagnosticCheck.list(json:))
    }

    // MARK: - Restoration state (Docs/LocalAPI.md §20)

    /// Saves `app`'s restoration state (paths to typed-JSON values), stamped with its
    /// version. `continueWith`: one of the app's activities this state may go with when
    /// another workstation continues it.
    public func saveState(app: String, version: String, entries: JSONObject, continueWith: String? = nil) async throws {
        var body: JSONObject = ["version": .string(version), "entries": .object(entries)]
        if let continueWith { body["continueWith"] = .string(continueWith) }
        _ = try await call(.PUT, ControlPaths.state(app), body: .object(body))
    }

    /// What a launching app gets back: its state, or nil and why (`none_saved`,
    /// `version_changed`, `crash_loop`). Call `stateRestored` once the app is up.
    public func restoreState(app: String, version: String, acceptOlder: Bool = false, session: String? = nil) async throws -> (state: JSONObject?, reason: String?) {
        var body: JSONObject = ["version": .string(version)]
        if acceptOlder { body["acceptOlder"] = .bool(true) }
        if let session { body["session"] = .string(session) }
        let o = try await call(.POST, ControlPaths.state(app) + "/restore", body: .object(body)).objectValue ?? [:]
        return (o["state"]?.objectValue, o["reason"]?.stringValue)
    }

    /// The launch that restored went well.
    public func stateRestored(app: String) async throws {
        _ = try await call(.POST, ControlPaths.state(app) + "/restored")
    }

    public func discardState(app: String) async throws {
        _ = try await call(.DELETE, ControlPaths.state(app))
    }

    /// `{"apps": [{app, version, savedAt, paths, failedLaunches, continueWith}]}`.
    public func listState() async throws -> JSONValue {
        try await call(.GET, ControlPaths.state)
    }

    /// The account's members (with who introduced each) and the devices removed from it.
    public func devices() async throws -> AccountDevices {
        AccountDevices(json: try await call(.GET, ControlPaths.devices))
    }

    /// Removes a device from the account: every member stops trusting it.
    public func removeDevice(_ deviceID: String) async throws {
        _ = try await call(.POST, ControlPaths.removeDevice, body: .object(["deviceID": .string(deviceID)]))
    }

    /// Opens this workstation's pairing window (or joins the open one); with `address`
    /// (HOST:PORT), dials that workstation to pair.
    public func openPairing(address: String? = nil) async throws -> PairingStatus {
        try decode(try await call(.POST, ControlPaths.pairing, body: .object(address.map { ["address": .string($0)] } ?? [:])), PairingStatus.init(json:))
    }

    public func pairingStatus() async throws -> PairingStatus {
        try decode(try await call(.GET, ControlPaths.pairing), PairingStatus.init(json:))
    }

    /// Confirms the code the user saw on both screens (or was given).
    public func confirmPairing(code: String) async throws -> PairingStatus {
        try decode(try await call(.POST, ControlPaths.pairingConfirm, body: .object(["code": .string(code)])), PairingStatus.init(json:))
    }

    public func cancelPairing() async throws -> PairingStatus {
        try decode(try await call(.DELETE, ControlPaths.pairing), PairingStatus.init(json:))
    }

    /// The session agent's desktop sources and what each does now.
    public func sources() async throws -> [DesktopSource] {
        try decode(try await call(.GET, ControlPaths.sources), DesktopSource.list(json:))
    }

    /// Turns a desktop source on or off (the agent keeps it in its settings); the sources after.
    public func setSource(_ name: String, enabled: Bool) async throws -> [DesktopSource] {
        try decode(try await call(.POST, ControlPaths.source(name), body: .object(["enabled": .bool(enabled)])), DesktopSource.list(json:))
    }

    /// Answers a `sources-requested` event: the sources, or why the change failed.
    public func answerSources(_ requestID: String, _ result: Result<[DesktopSource], SourceChangeError>) async throws {
        let body: JSONValue = switch result {
        case .success(let list): DesktopSource.listJSON(list)
        case .failure(let e): .object(["error": .object(["code": .string(e.code), "message": .string(e.message)])])
        }
        _ = try await call(.POST, ControlPaths.sourceAnswer(requestID), body: body)
    }

    /// Opens the event stream, which is also the app's session.
    public func openSession() async throws -> EventSession {
        try await EventSession.open(socketPath: socketPath)
    }

    // MARK: -

    private func call(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws -> JSONValue {
        let (status, json) = try await ControlConnection.exchange(socketPath, method, path, body: body)
        guard (200..<300).contains(status) else {
            throw HandoffClientError.api(APIError(status: status, body: json)
                ?? APIError(status: status, code: "http_\(status)", message: "handoffd answered HTTP \(status)"))
        }
        return json
    }

    private func decode<T>(_ json: JSONValue, _ make: (JSONValue) throws(ValidationError) -> T) throws -> T {
        do { return try make(json) } catch { throw HandoffClientError.badResponse("\(error)") }
    }
}
