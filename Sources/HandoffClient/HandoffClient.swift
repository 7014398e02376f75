import HandoffCore
import HandoffSystem
import HandoffControlAPI
import NIOHTTP1
import NIOPosix

/// The client library apps use to talk to their local handoffd (and what handoffctl is
/// built on). Every call is one short HTTP exchange on the control socket.
public struct HandoffClient: Sendable {
    public let socketPath: String
    /// Each call blocks its thread for the exchange instead of going through NIO's event
    /// loops (`BlockingExchange`): for a process that makes a call or two and exits. An
    /// app that stays should leave it off: a call may wait seconds (an app's will-save, a
    /// peer's fetch), and blocking would hold a thread of Swift's cooperative pool.
    public let blocking: Bool

    /// `socketPath` defaults to `$HANDOFF_SOCKET`, else `$XDG_RUNTIME_DIR/handoff/handoffd.sock`.
    public init(socketPath: String? = nil, blocking: Bool = false) {
        self.socketPath = socketPath ?? DefaultPaths.socket
        self.blocking = blocking
    }

    public func status() async throws -> DaemonStatus {
        try decode(try await call(.status), DaemonStatus.init(json:))
    }

    public func activities() async throws -> [ActivityRecord] {
        let body = try await call(.listActivities)
        guard case .array(let items)? = body.objectValue?["activities"] else {
            throw HandoffClientError.badResponse("no activities list")
        }
        return try items.map { try decode($0, ActivityRecord.init(json:)) }
    }

    /// Nil when no activity is current.
    public func current() async throws -> ActivityRecord? {
        do {
            return try decode(try await call(.getActivity, "current"), ActivityRecord.init(json:))
        } catch HandoffClientError.api(let e) where e.code == "no_current_activity" {
            return nil
        }
    }

    public func activity(_ id: String) async throws -> ActivityRecord {
        try decode(try await call(.getActivity, id), ActivityRecord.init(json:))
    }

    /// Makes a new activity current. With `session`, it belongs to that event session
    /// and dies with it; without, it belongs to the daemon.
    /// `streamFile` (absolute): a file handoffd serves as the activity's continuation
    /// streams, for an activity without an owning app.
    /// `document` (absolute): the file the activity is about; the other workstation opens
    /// its own copy in the same synced folder, or fetches one.
    /// `to`: offer it to these workstations only (names or device IDs); nil: to all.
    public func becomeCurrent(_ draft: ActivityDraft, session: String? = nil, streamFile: String? = nil, document: String? = nil,
                              to: [String]? = nil) async throws -> ActivityRecord {
        let request = BecomeCurrentRequest(draft: draft, session: session, streamFile: streamFile, document: document, to: to)
        return try decode(try await call(.becomeCurrent, body: request.json), ActivityRecord.init(json:))
    }

    public func becomeCurrent(existing id: String) async throws -> ActivityRecord {
        try decode(try await call(.becomeCurrentAgain, id, body: .object([:])), ActivityRecord.init(json:))
    }

    public func update(_ id: String, _ update: ActivityUpdate) async throws -> ActivityRecord {
        try decode(try await call(.updateActivity, id, body: .object(ActivityJSON.encode(update))), ActivityRecord.init(json:))
    }

    public func resign(_ id: String = "current") async throws -> ActivityRecord {
        try decode(try await call(.resign, id, body: .object([:])), ActivityRecord.init(json:))
    }

    public func invalidate(_ id: String = "current") async throws -> ActivityRecord {
        try decode(try await call(.invalidate, id, body: .object([:])), ActivityRecord.init(json:))
    }

    /// The activity with a payload as fresh as its owner can make it (will-save).
    public func snapshot(_ id: String = "current") async throws -> ActivityRecord {
        try decode(try await call(.snapshot, id, body: .object([:])), ActivityRecord.init(json:))
    }

    // MARK: - Other workstations

    /// This workstation's device ID and name.
    public func identity() async throws -> Identity {
        try decode(try await call(.identity), Identity.init(json:))
    }

    public func peers() async throws -> [PeerInfo] {
        guard let peers = PeerInfo.list(json: try await call(.peers)) else {
            throw HandoffClientError.badResponse("no peers list")
        }
        return peers
    }

    @discardableResult
    public func trust(_ deviceID: String, name: String? = nil, address: String? = nil) async throws -> TrustChange {
        try decode(try await call(.trust, body: TrustRequest(deviceID: deviceID, name: name, address: address).json), TrustChange.init(json:))
    }

    @discardableResult
    public func untrust(_ deviceID: String) async throws -> TrustChange {
        try decode(try await call(.untrust, body: DeviceRequest(deviceID: deviceID).json), TrustChange.init(json:))
    }

    /// What trusted, connected workstations offer now.
    public func offers() async throws -> [Offer] {
        try decode(try await call(.offers), Offer.list(json:))
    }

    /// Continues the most recent offered activity (or the one named): fetches its fresh
    /// payload from the origin, which hears that it was continued.
    /// With `launch`, the session agent then opens it in the app that handles it (or the
    /// web page in the browser) and `launch` in the answer says what it did.
    public func continueActivity(from: String? = nil, type: String? = nil, id: String? = nil, launch: Bool = false) async throws -> ContinuedActivity {
        let request = ContinueRequest(from: from, type: type, id: id, launch: launch)
        return try decode(try await call(.continueActivity, body: request.json), ContinuedActivity.init(json:))
    }

    /// An activity continued on this workstation lately (what an app launched to continue
    /// it asks for: its id comes in the `handoff:` URI or `HANDOFF_ACTIVITY_ID`).
    public func continuedActivity(_ id: String) async throws -> ContinuedActivity {
        try decode(try await call(.continuedActivity, id), ContinuedActivity.init(json:))
    }

    /// Activities continued here in the last minutes, newest first.
    public func continuedActivities() async throws -> [ContinuedActivity] {
        try decode(try await call(.listContinued), ContinuedActivity.list(json:))
    }

    /// Where a continued activity's document is on this workstation (`GET /v1/continued/{id}/document`).
    public func continuedDocument(_ id: String) async throws -> ContinuedDocument {
        ContinuedDocument(json: try await call(.continuedDocument, id))
    }

    /// The synced folders handoffd knows here, as resolved local paths.
    public func syncedRoots() async throws -> [SyncedRoot] {
        SyncedRoot.list(json: try await call(.syncedRoots))
    }

    public func syncedRootPaths() async throws -> [String] {
        try await syncedRoots().map(\.path)
    }

    // MARK: - The session agent's side

    /// Makes `session` (an open event session's token) the one asked to open apps.
    public func claimLauncher(session: String) async throws {
        _ = try await call(.claimLauncher, body: ClaimLauncherRequest(session: session).json)
    }

    /// Tells handoffd about sleep (LocalAPI.md §22): the session agent's lock, or that the
    /// workstation is about to sleep (handoffd answers once the offer is handed on) or woke.
    @discardableResult
    public func sleep(_ request: SleepRequest) async throws -> SleepAnswer {
        try decode(try await call(.sleep, body: request.json), SleepAnswer.init(json:))
    }

    /// Drops the offers this workstation keeps for the others (all, or one workstation's).
    public func forgetKept(device: String? = nil) async throws -> Int {
        try decode(try await call(.forgetKept, body: ForgetKeptRequest(device: device).json), KeptForgotten.init(json:)).forgotten
    }

    /// Answers a `launch-requested` event.
    public func answerLaunch(_ launchID: String, _ outcome: LaunchOutcome) async throws {
        _ = try await call(.answerLaunch, launchID, body: outcome.json)
    }

    /// Activities this workstation and its peers offered (those their apps let be
    /// searched), newest first.
    public func history(_ query: HistoryQuery) async throws -> [HistoryEntry] {
        try decode(try await call(.searchHistory, body: query.json), HistoryEntry.list(json:))
    }

    /// Forgets the history; returns how many entries it had.
    @discardableResult
    public func clearHistory() async throws -> Int {
        HistoryCleared(json: try await call(.clearHistory)).removed
    }

    /// Deletes this workstation's saved activities with these persistent identifiers from
    /// the history here and on the other workstations (NSUserActivity's
    /// `deleteSavedUserActivities(withPersistentIdentifiers:)`); nil: all of them.
    public func forgetSavedActivities(persistentIdentifiers: [String]?) async throws -> SavedForgotten {
        SavedForgotten(json: try await call(.forgetSavedActivities, body: ForgetSavedRequest(persistentIdentifiers: persistentIdentifiers).json))
    }

    /// Opens a history entry's web page or document again (through the session agent).
    public func reopenHistoryEntry(_ id: Int64) async throws -> ReopenedEntry {
        try decode(try await call(.openHistoryEntry, String(id)), ReopenedEntry.init(json:))
    }

    /// What handoffd can tell `handoffctl doctor` (Docs/LocalAPI.md §21).
    public func diagnostics() async throws -> [DiagnosticCheck] {
        try decode(try await call(.diagnostics), DiagnosticCheck.list(json:))
    }

    // MARK: - Restoration state (Docs/LocalAPI.md §20)

    /// Saves `app`'s restoration state (paths to typed-JSON values), stamped with its
    /// version. `continueWith`: one of the app's activities this state may go with when
    /// another workstation continues it.
    public func saveState(app: String, version: String, entries: JSONObject, continueWith: String? = nil) async throws {
        _ = try await call(.saveState, app, body: SaveStateRequest(version: version, entries: entries, continueWith: continueWith).json)
    }

    /// What a launching app gets back: its state, or nil and why (`none_saved`,
    /// `version_changed`, `crash_loop`). Call `stateRestored` once the app is up.
    public func restoreState(app: String, version: String, acceptOlder: Bool = false, session: String? = nil) async throws -> RestoredState {
        let request = RestoreStateRequest(version: version, acceptOlder: acceptOlder, session: session)
        return RestoredState(json: try await call(.restoreState, app, body: request.json))
    }

    /// The launch that restored went well.
    public func stateRestored(app: String) async throws {
        _ = try await call(.stateRestored, app)
    }

    public func discardState(app: String) async throws {
        _ = try await call(.discardState, app)
    }

    /// The apps with restoration state kept here.
    public func listState() async throws -> [SavedState] {
        try decode(try await call(.listState), SavedState.list(json:))
    }

    /// The account's members (with who introduced each) and the devices removed from it.
    public func devices() async throws -> AccountDevices {
        AccountDevices(json: try await call(.devices))
    }

    /// Removes a device from the account: every member stops trusting it.
    @discardableResult
    public func removeDevice(_ deviceID: String) async throws -> TrustChange {
        try decode(try await call(.removeDevice, body: DeviceRequest(deviceID: deviceID).json), TrustChange.init(json:))
    }

    /// Opens this workstation's pairing window (or joins the open one); with `address`
    /// (HOST:PORT), dials that workstation to pair.
    public func openPairing(address: String? = nil) async throws -> PairingStatus {
        try decode(try await call(.openPairing, body: OpenPairingRequest(address: address).json), PairingStatus.init(json:))
    }

    /// Sets this workstation's identity aside for a new one (`pair --new-identity`):
    /// handoffd answers, then restarts with the new identity (`waitForNewIdentity`).
    public func renewIdentity(force: Bool = false) async throws -> IdentityRenewal {
        try decode(try await call(.renewIdentity, body: RenewIdentityRequest(force: force).json), IdentityRenewal.init(json:))
    }

    /// Waits until handoffd answers again under another identity than `previous` (it
    /// restarts after `renewIdentity`); fails after `seconds`.
    public func waitForNewIdentity(previous: String, seconds: Int = 20) async throws -> DaemonStatus {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var last: Error?
        while ContinuousClock.now < deadline {
            do {
                let s = try await status()
                if s.deviceID != previous { return s }
            } catch {
                last = error
            }
            // On an event-loop timer: Task.sleep would start libdispatch's timer thread,
            // which then wakes an idle session agent every second.
            try await MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .milliseconds(100)) {}.futureResult.get()
        }
        throw HandoffClientError.connectionLost("handoffd did not come back with a new identity within \(seconds) s"
            + (last.map { " (\($0))" } ?? ", and still answers as \(previous): it could not set the old identity aside")
            + "; journalctl --user -u handoffd says why")
    }

    public func pairingStatus() async throws -> PairingStatus {
        try decode(try await call(.pairingStatus), PairingStatus.init(json:))
    }

    /// Confirms the code the user saw on both screens (or was given).
    public func confirmPairing(code: String) async throws -> PairingStatus {
        try decode(try await call(.confirmPairing, body: ConfirmPairingRequest(code: code).json), PairingStatus.init(json:))
    }

    public func cancelPairing() async throws -> PairingStatus {
        try decode(try await call(.cancelPairing), PairingStatus.init(json:))
    }

    /// The session agent's desktop sources and what each does now.
    public func sources() async throws -> [DesktopSource] {
        try decode(try await call(.listSources), DesktopSource.list(json:))
    }

    /// Turns a desktop source on or off (the agent keeps it in its settings); the sources after.
    public func setSource(_ name: String, enabled: Bool) async throws -> [DesktopSource] {
        try decode(try await call(.setSource, name, body: SetSourceRequest(enabled: enabled).json), DesktopSource.list(json:))
    }

    /// Answers a `sources-requested` event: the sources, or why the change failed.
    public func answerSources(_ requestID: String, _ result: Result<[DesktopSource], SourceChangeError>) async throws {
        _ = try await call(.answerSources, requestID, body: SourcesAnswer(result).json)
    }

    /// Opens the event stream, which is also the app's session.
    public func openSession() async throws -> EventSession {
        try await EventSession.open(socketPath: socketPath)
    }

    /// Runs `body` with a session of its own, closed (and waited for) when `body` returns
    /// or throws.
    public func withSession<T: Sendable>(_ body: (EventSession) async throws -> T) async throws -> T {
        let session = try await openSession()
        let result: Result<T, any Error>
        do { result = .success(try await body(session)) } catch { result = .failure(error) }
        await session.closeAndWait()
        return try result.get()
    }

    // MARK: -

    func call(_ endpoint: ControlEndpoint, _ parameter: String = "", body: JSONValue? = nil) async throws -> JSONValue {
        let method = HTTPMethod(rawValue: endpoint.method), path = endpoint.path(parameter)
        let (status, json) = blocking
            ? try BlockingExchange.exchange(socketPath, method, path, body: body)
            : try await ControlConnection.exchange(socketPath, method, path, body: body)
        guard (200..<300).contains(status) else {
            throw HandoffClientError.api(APIError(status: status, body: json)
                ?? APIError(status: status, code: "http_\(status)", message: "handoffd answered HTTP \(status)"))
        }
        return json
    }

    func decode<T>(_ json: JSONValue, _ make: (JSONValue) throws(ValidationError) -> T) throws -> T {
        do { return try make(json) } catch { throw HandoffClientError.badResponse("\(error)") }
    }
}
