import HandoffCore
import HandoffControlAPI
import NIOHTTP1
import NIOPosix

/// Turns control requests into registry calls and registry results into responses.
/// All behaviour stays in `ActivityRegistry`; this only translates.
struct ControlRouter: Sendable {
    let registry: ActivityRegistry
    let peers: PeerService
    let streams: StreamBroker
    let agent: SessionAgentBroker
    let history: ActivityHistory?
    let restoration: RestorationStore
    let stateDirectory: String
    /// `synced-root` lines of the configuration, for document references.
    let configuredRoots: [(name: String, path: String)]
    let status: @Sendable () async -> DaemonStatus

    func handle(_ route: ControlRoute, _ request: ControlRequest) async -> ControlResponse {
        do {
            switch route {
            case .status:
                return .ok(await status().json)
            case .listActivities:
                let list = await registry.all()
                return .ok(.object(["activities": .array(list.map(\.json))]))
            case .becomeCurrent:
                let body = try request.jsonObject()
                let draft: ActivityDraft
                do { draft = try ActivityJSON.decodeDraft(body, extraFields: ["session", "streamFile", "document"]) } catch { throw HandoffError.invalid(error) }
                var session = request.headers.first(name: ControlPaths.sessionHeader)
                if let v = body["session"], v != .null {
                    guard let s = v.stringValue else { throw HandoffError.badRequest("session must be a string") }
                    session = s
                }
                var streamFile: String?
                if let v = body["streamFile"], v != .null {
                    guard let f = v.stringValue else { throw HandoffError.badRequest("streamFile must be a string") }
                    streamFile = f
                }
                var document: (file: String, reference: DocumentReference)?
                if let v = body["document"], v != .null {
                    guard let path = v.stringValue else { throw HandoffError.badRequest("document must be a string: the file's absolute path") }
                    document = try await locate(path)
                }
                return .created(try await registry.becomeCurrent(draft, session: session, streamFile: streamFile, document: document).json)
            case .getActivity(let id):
                return .ok(try await registry.get(id).json)
            case .updateActivity(let id):
                let update: ActivityUpdate
                do { update = try ActivityJSON.decodeUpdate(try request.jsonObject()) } catch let e as HandoffError { throw e } catch let e as ValidationError { throw HandoffError.invalid(e) }
                return .ok(try await registry.update(id, update).json)
            case .becomeCurrentAgain(let id):
                try requireEmptyObject(request)
                return .ok(try await registry.becomeCurrent(existing: id).json)
            case .resign(let id):
                try requireEmptyObject(request)
                return .ok(try await registry.resign(id).json)
            case .invalidate(let id):
                try requireEmptyObject(request)
                return .ok(try await registry.invalidate(id).json)
            case .snapshot(let id):
                try requireEmptyObject(request)
                return .ok(try await registry.snapshot(id).json)
            case .events:
                return .error(HandoffError.badRequest("the event stream is served by the connection, not the router"))
            case .identity:
                return .ok(.object(["deviceID": .string(await peers.deviceID.description), "name": .string(peers.deviceName)]))
            case .peers:
                return .ok(await peers.peersJSON())
            case .offers:
                return .ok(await peers.offersJSON())
            case .trust:
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let id = try r.requiredString("deviceID")
                let name = try r.string("name")
                let address = try r.string("address")
                try r.rejectUnknownFields()
                return .ok(try await peers.trustDevice(id, name: name, address: address))
            case .untrust:
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let id = try r.requiredString("deviceID")
                try r.rejectUnknownFields()
                return .ok(try await peers.untrustDevice(id))
            case .continueActivity:
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let from = try r.string("from")
                let type = try r.string("type")
                let id = try r.string("id")
                let launch = try r.bool("launch") ?? false
                try r.rejectUnknownFields()
                return .ok(try await peers.continueActivity(from: from, type: type, id: id, launch: launch))
            case .listContinued:
                return .ok(await peers.continuedActivitiesJSON())
            case .continuedActivity(let id):
                return .ok(try await peers.continuedActivity(id))
            case .continuedDocument(let id):
                return .ok(try await continuedDocument(id))
            case .syncedRoots:
                let configured = configuredRoots
                let roots = try await NIOThreadPool.singleton.runIfActive { SyncedRoots.discover(configured: configured) }
                return .ok(.object(["roots": .array(roots.roots.map {
                    .object(["kind": .string($0.id.kind), "id": .string($0.id.id), "path": .string($0.path)])
                })]))
            case .claimLauncher:
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let bodySession = try r.string("session")
                try r.rejectUnknownFields()
                guard let session = bodySession ?? request.headers.first(name: ControlPaths.sessionHeader) else {
                    throw HandoffError.badRequest("name the event session that takes the launcher role: \"session\" in the body or the \(ControlPaths.sessionHeader) header")
                }
                try await agent.claim(session: session)
                return .ok(.object(["launcher": .bool(true), "session": .string(session)]))
            case .answerLaunch(let id):
                let outcome: LaunchOutcome
                do { outcome = try LaunchOutcome(json: .object(try request.jsonObject())) } catch let e as ValidationError {
                    throw HandoffError.badRequest(e.description)
                }
                guard await agent.answer(id, .launch, .success(outcome.json)) else {
                    throw HandoffError(.notFound, code: "unknown_launch", message: "no launch \(id) is waiting for an answer (it may have timed out)")
                }
                return .ok(.object(["launchID": .string(id), "answered": .bool(true)]))
            case .searchHistory:
                let query: HistoryQuery
                let body = try request.jsonObject()
                do { query = try HistoryQuery(json: body) } catch { throw HandoffError.badRequest(error.description) }
                return .ok(HistoryEntry.listJSON(try await requireHistory().search(query)))
            case .clearHistory:
                try requireEmptyObject(request)
                return .ok(.object(["removed": .integer(Int64(try await requireHistory().clear()))]))
            case .openHistoryEntry(let id):
                try requireEmptyObject(request)
                guard let n = Int64(id), let (entry, document) = try await requireHistory().entry(n) else {
                    throw HandoffError(.notFound, code: "not_found", message: "no history entry \(id) (see handoffctl history)")
                }
                return .ok(try await reopen(entry, document: document))
            case .diagnostics:
                return .ok(DiagnosticCheck.listJSON(await peers.diagnostics(stateDirectory: stateDirectory)))
            case .listState:
                return .ok(await restoration.list())
            case .saveState(let app):
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let version = try r.requiredString("version")
                let entries = try r.object("entries") ?? [:]
                let continueWith = try r.string("continueWith")
                try r.rejectUnknownFields()
                var activity: ActivityID?
                if let continueWith {
                    // Only an activity of this workstation's: its state may go where it is continued.
                    activity = try await registry.get(continueWith).activity.id
                }
                try await restoration.save(app: app, version: version, entries: entries, continueWith: activity, at: SystemClock.now())
                return .ok(.object(["app": .string(app), "saved": .bool(true)]))
            case .restoreState(let app):
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let version = try r.requiredString("version")
                let acceptOlder = try r.bool("acceptOlder") ?? false
                let session = try r.string("session") ?? request.headers.first(name: ControlPaths.sessionHeader)
                try r.rejectUnknownFields()
                return .ok(try await restoration.restore(app: app, version: version, acceptOlder: acceptOlder, session: session, at: SystemClock.now()))
            case .stateRestored(let app):
                try requireEmptyObject(request)
                try await restoration.restored(app: app)
                return .ok(.object(["app": .string(app), "restored": .bool(true)]))
            case .discardState(let app):
                guard await restoration.discard(app: app) else {
                    throw HandoffError(.notFound, code: "no_state", message: "no restoration state is kept for \(app) (handoffctl state lists them)")
                }
                return .ok(.object(["app": .string(app), "discarded": .bool(true)]))
            case .devices:
                return .ok(await peers.devicesJSON())
            case .removeDevice:
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let id = try r.requiredString("deviceID")
                try r.rejectUnknownFields()
                return .ok(try await peers.removeFromAccount(id))
            case .openPairing:
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let address = try r.string("address")
                try r.rejectUnknownFields()
                return .ok(try await peers.openPairing(address: address).json)
            case .pairingStatus:
                return .ok(await peers.pairingStatus().json)
            case .confirmPairing:
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let code = try r.string("code")
                try r.rejectUnknownFields()
                guard let code else { throw HandoffError.badRequest("say {\"code\": \"123456\"}: the code both screens show") }
                return .ok(try await peers.confirmPairing(code: code).json)
            case .cancelPairing:
                return .ok(await peers.cancelPairing().json)
            case .listSources:
                return .ok(DesktopSource.listJSON(try await agent.sources(nil)))
            case .setSource(let name):
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let enabled = try r.bool("enabled")
                try r.rejectUnknownFields()
                guard let enabled else { throw HandoffError.badRequest("say {\"enabled\": true} or {\"enabled\": false}") }
                guard DesktopSource.names.contains(name) else {
                    throw HandoffError(.notFound, code: "unknown_source", message: "no source \"\(name.prefix(64))\": the sources are \(DesktopSource.names.joined(separator: ", "))")
                }
                return .ok(DesktopSource.listJSON(try await agent.sources(DesktopSourceChange(source: name, enabled: enabled))))
            case .answerSources(let id):
                let body = JSONValue.object(try request.jsonObject())
                let result: Result<JSONValue, SessionAgentBroker.Failure>
                if let e = body.objectValue?["error"]?.objectValue {
                    guard let code = e["code"]?.stringValue, let message = e["message"]?.stringValue else {
                        throw HandoffError.badRequest("an error answer is {\"error\": {\"code\", \"message\"}}")
                    }
                    result = .failure(.init(code: String(code.prefix(64)), message: String(message.prefix(4096))))
                } else {
                    do { _ = try DesktopSource.list(json: body) } catch { throw HandoffError.badRequest(error.description) }
                    result = .success(body)
                }
                guard await agent.answer(id, .sources, result) else {
                    throw HandoffError(.notFound, code: "unknown_request", message: "no sources request \(id) is waiting for an answer (it may have timed out)")
                }
                return .ok(.object(["requestID": .string(id), "answered": .bool(true)]))
            case .openStream, .acceptStream:
                // Well-formed requests with `Upgrade: handoff-stream` never get here.
                if let upgrade = request.headers.first(name: UpgradeRequestFilter.refusedHeader), upgrade.lowercased() == ControlPaths.streamProtocol {
                    throw HandoffError.badRequest(route == .openStream
                        ? "open a stream with ?activity=<32 hex digits>, the id of an activity continued from another workstation (and, optionally, &into=<an absolute path, percent-encoded>)"
                        : "the stream id is 32 hex digits, and \(ControlPaths.streamLengthHeader) a whole number of bytes")
                }
                throw HandoffError(.versionMismatch, code: "upgrade_required",
                               message: "continuation streams need an HTTP upgrade: send `Connection: Upgrade` and `Upgrade: \(ControlPaths.streamProtocol)` (Docs/LocalAPI.md)")
            case .refuseStream(let id):
                var r = JSONFieldReader(try request.jsonObject(), path: "body")
                let reason = try r.string("reason")
                try r.rejectUnknownFields()
                if let failure = await streams.refuse(id, reason: reason) {
                    throw HandoffError(.notFound, code: failure.code, message: failure.message)
                }
                return .ok(.object(["streamID": .string(id), "refused": .bool(true)]))
            }
        } catch let e as HandoffError {
            return .error(e)
        } catch let e as ValidationError where e.field.hasPrefix("body.") {
            return .error(HandoffError.badRequest(e.description))  // a request field, not an activity's
        } catch let e as ValidationError {
            return .error(HandoffError.invalid(e))
        } catch {
            return .error(HandoffError(.internal, code: "internal", message: "\(error)"))
        }
    }

    /// Hashing a document reads all of it: on the thread pool, not an event loop.
    private func locate(_ path: String) async throws -> (file: String, reference: DocumentReference) {
        let configured = configuredRoots
        return try await NIOThreadPool.singleton.runIfActive {
            try DocumentLocator.reference(for: path, roots: SyncedRoots.discover(configured: configured))
        }
    }

    /// Where a continued activity's document is on this workstation, if anywhere.
    private func continuedDocument(_ id: String) async throws -> JSONValue {
        let record = try await peers.continuedRecord(id)
        guard let value = record.activity.userInfo[DocumentReference.userInfoKey] else {
            throw HandoffError(.notFound, code: "no_document", message: "activity \(id) has no document")
        }
        let reference: DocumentReference
        do { reference = try DocumentReference(propertyValue: value) } catch {
            throw HandoffError(.invalid, code: "bad_document", message: "the document reference from the other workstation is unusable: \(error)")
        }
        let configured = configuredRoots
        let local = try await NIOThreadPool.singleton.runIfActive {
            DocumentLocator.local(reference, roots: SyncedRoots.discover(configured: configured))
        }
        var root: JSONValue = .null
        if let r = reference.root { root = .object(["kind": .string(r.kind), "id": .string(r.id)]) }
        return .object([
            "reference": .object(["root": root, "path": .string(reference.path), "size": .integer(reference.size),
                                  "sha256": .string(reference.sha256.hexString)]),
            "local": local.json,
        ])
    }

    private func requireHistory() throws(HandoffError) -> ActivityHistory {
        guard let history else {
            throw HandoffError(.unavailable, code: "no_history", message: "the activity history is off (history-days = 0 in handoffd.conf)")
        }
        return history
    }

    /// Continuing from the history: the page or the document again, not the app's state
    /// (that is gone with the offer). The session agent opens it as it opens a continued
    /// activity's web page or document.
    private func reopen(_ entry: HistoryEntry, document: DocumentReference?) async throws -> JSONValue {
        guard entry.webpageURL != nil || document != nil else {
            throw HandoffError(.conflict, code: "nothing_to_reopen",
                               message: "this entry has no web page or document to reopen; continue it from \(entry.device.name) while it offers it")
        }
        var activity = Activity(id: .random(), activityType: ActivityHistory.reopenType, title: entry.title, webpageURL: entry.webpageURL,
                                createdAt: entry.firstSeen, updatedAt: entry.lastSeen, origin: DeviceRef(name: entry.device.name, id: entry.device.id))
        if let document { activity.userInfo[DocumentReference.userInfoKey] = document.propertyValue }
        let record = ActivityRecord(activity: activity, state: .current, owner: "history", payloadSize: ActivityPropertyList.encodedSize(of: activity))
        await peers.rememberReopened(record, from: entry.device)
        let outcome = await agent.launch(record, from: entry.device)
        return .object(["entry": entry.json, "launch": outcome.json])
    }

    private func requireEmptyObject(_ request: ControlRequest) throws(HandoffError) {
        let o = try request.jsonObject()
        if let k = o.keys.first { throw HandoffError.invalid(ValidationError(field: k, problem: "unknown field")) }
    }
}
