import HandoffCore
import HandoffControlAPI
import NIOHTTP1
import NIOPosix

/// Turns control requests into registry calls and registry results into responses.
/// All behaviour stays in `ActivityRegistry`; this only translates.
struct ControlRouter: Sendable {
    let registry: ActivityRegistry
    let peers: PeerService
    let clipboard: ClipboardService
    let peerStreams: PeerStreamService
    let pairing: PairingService
    let streams: StreamBroker
    let agent: SessionAgentBroker
    let history: ActivityHistory?
    let restoration: RestorationStore
    let kdeConnect: KDEConnectService
    let stateDirectory: String
    /// `synced-root` lines of the configuration, for document references.
    let configuredRoots: [(name: String, path: String)]
    /// Where a new identity is asked for (handoffd restarts for it).
    var restart: DaemonRestart?
    let status: @Sendable () async -> DaemonStatus
    var clock: any WallClock = SystemClock()

    /// `parameter` is the route's `{...}` segment, "" for a route without one.
    func handle(_ endpoint: ControlEndpoint, _ parameter: String, _ request: ControlRequest) async -> ControlResponse {
        let id = parameter
        do {
            switch endpoint {
            case .status:
                return .ok(await status().json)
            case .listActivities:
                let list = await registry.all()
                return .ok(.object(["activities": .array(list.map(\.json))]))
            case .becomeCurrent:
                var body = try BecomeCurrentRequest(body: try request.jsonObject())
                try await nameSyncedFolder(&body.draft)
                var document: (file: String, reference: DocumentReference)?
                if let path = body.document { document = try await locate(path) }
                let session = body.session ?? request.headers.first(name: ControlEndpoint.sessionHeader)
                let targets = try await peers.targets(body.to ?? [])
                let record = try await registry.becomeCurrent(body.draft, session: session, streamFile: body.streamFile, document: document,
                                                              targets: targets)
                return .created(record.json).warning(record.warnings.first)
            case .getActivity:
                return .ok(try await registry.get(id).json)
            case .updateActivity:
                let update: ActivityUpdate
                do { update = try ActivityJSON.decodeUpdate(try request.jsonObject()) } catch let e as HandoffError { throw e } catch let e as ValidationError { throw HandoffError.invalid(e) }
                let record = try await registry.update(id, update)
                return .ok(record.json).warning(record.warnings.first)
            case .becomeCurrentAgain:
                try requireEmptyObject(request)
                return .ok(try await registry.becomeCurrent(existing: id).json)
            case .resign:
                try requireEmptyObject(request)
                return .ok(try await registry.resign(id).json)
            case .invalidate, .deleteActivity:
                try requireEmptyObject(request)
                return .ok(try await registry.invalidate(id).json)
            case .snapshot:
                try requireEmptyObject(request)
                return .ok(try await registry.snapshot(id).json)
            case .events:
                return .error(HandoffError.badRequest("the event stream is served by the connection, not the router"))
            case .identity:
                return .ok(Identity(deviceID: await peers.deviceID.description, name: peers.deviceName).json)
            case .renewIdentity:
                let body = try RenewIdentityRequest(body: try request.jsonObject())
                guard let restart else { throw HandoffError(.unavailable, code: "unavailable", message: "this handoffd cannot restart itself") }
                let previous = try await peers.renewalCheck(force: body.force)
                let folder = try await restart.renewIdentity(keptAt: IdentityRetirement.folder(stateDirectory: stateDirectory, id: previous, at: clock.now()))
                return .ok(IdentityRenewal(previousID: previous.description, keptAt: folder).json)
            case .peers:
                return .ok(PeerInfo.listJSON(await peers.peers()))
            case .offers:
                return .ok(Offer.listJSON(await peers.offers()))
            case .trust:
                let body = try TrustRequest(body: try request.jsonObject())
                return .ok(try await peers.trustDevice(body.deviceID, name: body.name, address: body.address).json)
            case .untrust:
                let body = try DeviceRequest(body: try request.jsonObject())
                return .ok(try await peers.untrustDevice(body.deviceID).json)
            case .continueActivity:
                let body = try ContinueRequest(body: try request.jsonObject())
                return .ok(try await peers.continueActivity(from: body.from, type: body.type, id: body.id, launch: body.launch).json)
            case .listContinued:
                return .ok(ContinuedActivity.listJSON(await peers.continuedActivities()))
            case .continuedActivity:
                return .ok(try await peers.continuedActivity(id).json)
            case .continuedDocument:
                return .ok(try await continuedDocument(id).json)
            case .syncedRoots:
                let configured = configuredRoots
                let roots = try await NIOThreadPool.singleton.runIfActive { SyncedRoots.discover(configured: configured) }
                return .ok(SyncedRoot.listJSON(roots.roots.map { SyncedRoot(kind: $0.id.kind, id: $0.id.id, path: $0.path) }))
            case .claimLauncher:
                let body = try ClaimLauncherRequest(body: try request.jsonObject())
                guard let session = body.session ?? request.headers.first(name: ControlEndpoint.sessionHeader) else {
                    throw HandoffError.badRequest("name the event session that takes the launcher role: \"session\" in the body or the \(ControlEndpoint.sessionHeader) header")
                }
                try await agent.claim(session: session)
                return .ok(Acknowledgement.launcher(session: session).json)
            case .answerLaunch:
                let outcome: LaunchOutcome
                do { outcome = try LaunchOutcome(json: .object(try request.jsonObject())) } catch let e as ValidationError {
                    throw HandoffError.badRequest(e.description)
                }
                guard await agent.answer(id, .launch, .success(outcome.json)) else {
                    throw HandoffError(.notFound, code: "unknown_launch", message: "no launch \(id) is waiting for an answer (it may have timed out)")
                }
                return .ok(Acknowledgement.answered(launch: id).json)
            case .searchHistory:
                let query: HistoryQuery
                let body = try request.jsonObject()
                do { query = try HistoryQuery(json: body) } catch { throw HandoffError.badRequest(error.description) }
                return .ok(HistoryEntry.listJSON(try await requireHistory().search(query)))
            case .clearHistory:
                try requireEmptyObject(request)
                return .ok(HistoryCleared(removed: try await requireHistory().clear()).json)
            case .forgetSavedActivities:
                let body: ForgetSavedRequest
                do { body = try ForgetSavedRequest(body: try request.jsonObject()) } catch let e as HandoffError { throw e } catch let e as ValidationError { throw HandoffError.invalid(e) }
                let (removed, asked) = try await peers.forgetOwnHistory(body.persistentIdentifiers)
                return .ok(SavedForgotten(removed: removed, asked: asked).json)
            case .openHistoryEntry:
                try requireEmptyObject(request)
                guard let n = Int64(id), let (entry, document) = try await requireHistory().entry(n) else {
                    throw HandoffError(.notFound, code: "not_found", message: "no history entry \(id) (see handoffctl history)")
                }
                return .ok(try await reopen(entry, document: document).json)
            case .diagnostics:
                return .ok(DiagnosticCheck.listJSON(await peers.diagnostics(stateDirectory: stateDirectory) + [await kdeConnect.diagnostic()]))
            case .listState:
                return .ok(SavedState.listJSON(await restoration.list()))
            case .saveState:
                let body = try SaveStateRequest(body: try request.jsonObject())
                var activity: ActivityID?
                if let continueWith = body.continueWith {
                    // Only an activity of this workstation's: its state may go where it is continued.
                    activity = try await registry.get(continueWith).activity.id
                }
                try await restoration.save(app: id, version: body.version, entries: body.entries, continueWith: activity, at: clock.now())
                return .ok(Acknowledgement.saved(app: id).json)
            case .restoreState:
                let body = try RestoreStateRequest(body: try request.jsonObject())
                let session = body.session ?? request.headers.first(name: ControlEndpoint.sessionHeader)
                return .ok(try await restoration.restore(app: id, version: body.version, acceptOlder: body.acceptOlder, session: session, at: clock.now()).json)
            case .stateRestored:
                try requireEmptyObject(request)
                try await restoration.restored(app: id)
                return .ok(Acknowledgement.restored(app: id).json)
            case .discardState:
                guard await restoration.discard(app: id) else {
                    throw HandoffError(.notFound, code: "no_state", message: "no restoration state is kept for \(id) (handoffctl state lists them)")
                }
                return .ok(Acknowledgement.discarded(app: id).json)
            case .devices:
                return .ok(await peers.accountDevices().json)
            case .removeDevice:
                let body = try DeviceRequest(body: try request.jsonObject())
                return .ok(try await peers.removeFromAccount(body.deviceID).json)
            case .openPairing:
                let body = try OpenPairingRequest(body: try request.jsonObject())
                return .ok(try await pairing.open(address: body.address).json)
            case .pairingStatus:
                return .ok(await pairing.status().json)
            case .confirmPairing:
                let body = try ConfirmPairingRequest(body: try request.jsonObject())
                return .ok(try await pairing.confirm(code: body.code).json)
            case .cancelPairing:
                return .ok(await pairing.cancel().json)
            case .listSources:
                return .ok(DesktopSource.listJSON(try await agent.sources(nil)))
            case .setSource:
                let body = try SetSourceRequest(body: try request.jsonObject())
                guard DesktopSource.names.contains(id) else {
                    throw HandoffError(.notFound, code: "unknown_source", message: "no source \"\(id.prefix(64))\": the sources are \(DesktopSource.names.joined(separator: ", "))")
                }
                return .ok(DesktopSource.listJSON(try await agent.sources(DesktopSourceChange(source: id, enabled: body.enabled))))
            case .answerSources:
                let answer = try SourcesAnswer(body: try request.jsonObject())
                let result = answer.result.map(DesktopSource.listJSON).mapError { SessionAgentBroker.Failure(code: $0.code, message: $0.message) }
                guard await agent.answer(id, .sources, result) else {
                    throw HandoffError(.notFound, code: "unknown_request", message: "no sources request \(id) is waiting for an answer (it may have timed out)")
                }
                return .ok(Acknowledgement.answered(sources: id).json)
            case .kdeConnect:
                return .ok(await kdeConnect.status().json)
            case .setKDEConnect:
                let body = try SetKDEConnectRequest(body: try request.jsonObject())
                return .ok(try await kdeConnect.set(enabled: body.enabled).json)
            case .kdeConnectDevice:
                let body = try KDEConnectDeviceRequest(body: try request.jsonObject())
                guard let device = PercentEncoding.decode(Substring(id)), !device.isEmpty, device.utf8.count <= 256 else {
                    throw HandoffError.badRequest("name a KDE Connect device by its id or name (percent-encoded), at most 256 bytes")
                }
                return .ok(try await kdeConnect.device(device, body))
            case .clipboard:
                return .ok(ClipboardRecord.newestJSON(await clipboard.record()))
            case .announceClipboard:
                let body = try AnnounceClipboardRequest(body: try request.jsonObject())
                guard let session = body.session ?? request.headers.first(name: ControlEndpoint.sessionHeader) else {
                    throw HandoffError.badRequest("name the event session that serves the copy's bytes: \"session\" in the body or the \(ControlEndpoint.sessionHeader) header (or copy bytes with POST /v1/clipboard/copy)")
                }
                return .created(try await clipboard.announce(body.formats, session: session).json)
            case .withdrawClipboard:
                let body = try WithdrawClipboardRequest(body: try request.jsonObject())
                return .ok(ClipboardRecord.newestJSON(await clipboard.withdraw(body.id)))
            case .openStream, .acceptStream, .pasteClipboard, .copyToClipboard:
                // Well-formed requests with `Upgrade: handoff-stream` never get here.
                if let upgrade = request.headers.first(name: UpgradeRequestFilter.refusedHeader), upgrade.lowercased() == ControlEndpoint.streamProtocol {
                    switch endpoint {
                    case .openStream:
                        throw HandoffError.badRequest("open a stream with ?activity=<32 hex digits>, the id of an activity continued from another workstation (and, optionally, &into=<an absolute path, percent-encoded>)")
                    case .pasteClipboard:
                        throw HandoffError.badRequest("paste with optional ?type=<a MIME type, percent-encoded>, &id=<the copy's 32 hex digits> and &into=<an absolute path, percent-encoded>")
                    case .copyToClipboard:
                        throw HandoffError.badRequest("copy with ?type=<a MIME type such as text/plain;charset=utf-8, percent-encoded>")
                    default:
                        throw HandoffError.badRequest("the stream id is 32 hex digits, and \(ControlEndpoint.streamLengthHeader) a whole number of bytes")
                    }
                }
                throw HandoffError(.versionMismatch, code: "upgrade_required",
                               message: "continuation streams need an HTTP upgrade: send `Connection: Upgrade` and `Upgrade: \(ControlEndpoint.streamProtocol)` (Docs/LocalAPI.md)")
            case .refuseStream:
                let body = try RefuseStreamRequest(body: try request.jsonObject())
                if let failure = await streams.refuse(id, reason: body.reason) {
                    throw HandoffError(.notFound, code: failure.code, message: failure.message)
                }
                return .ok(Acknowledgement.refused(stream: id).json)
            case .forgetKept:
                let body = try ForgetKeptRequest(body: try request.jsonObject())
                return .ok(try await peers.forgetKept(device: body.device).json)
            case .sleep:
                let body = try SleepRequest(body: try request.jsonObject())
                return .ok(try await peers.sleep(body, session: request.headers.first(name: ControlEndpoint.sessionHeader)).json)
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

    /// A terminal's directory inside a synced folder is named by that folder too, so a
    /// workstation syncing it can open its own copy (`TerminalContinuation`). What the app
    /// named itself is kept; a directory that is not a string is left to validation.
    private func nameSyncedFolder(_ draft: inout ActivityDraft) async throws {
        guard draft.activityType == WellKnownActivityType.terminal, draft.userInfo[SyncedFolderPath.userInfoKey] == nil,
              case .string(let directory)? = draft.userInfo["directory"], directory.hasPrefix("/") else { return }
        let configured = configuredRoots
        if let folder = try await NIOThreadPool.singleton.runIfActive({
            TerminalPreferencesHere.syncedFolder(of: directory, configuredRoots: configured)
        }) {
            draft.userInfo[SyncedFolderPath.userInfoKey] = folder.propertyValue
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
    private func continuedDocument(_ id: String) async throws -> ContinuedDocument {
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
        return ContinuedDocument(reference, local)
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
    private func reopen(_ entry: HistoryEntry, document: DocumentReference?) async throws -> ReopenedEntry {
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
        return ReopenedEntry(entry: entry, launch: outcome)
    }

    private func requireEmptyObject(_ request: ControlRequest) throws(HandoffError) {
        let o = try request.jsonObject()
        if let k = o.keys.first { throw HandoffError.invalid(ValidationError(field: k, problem: "unknown field")) }
    }
}
