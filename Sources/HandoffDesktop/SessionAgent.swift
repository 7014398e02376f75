import FoundationEssentials
import HandoffClient
import HandoffCore
import HandoffSystem
import HandoffControlAPI
import Logging

/// The desktop half of handoff: a client of the local API that lives in the graphical
/// session. It takes the launcher role (continuing opens apps through it), and shows
/// "activity available" notifications for what the user's other workstations offer.
/// handoffd itself never touches the desktop, so a headless machine runs it alone.
public actor SessionAgent {
    public struct Settings: Sendable {
        public var configPath: String
        /// `$XDG_DATA_HOME/applications`: entries there win over the system's.
        public var userApplications: String
        public var notificationsAllowed = true
        /// The media source (MPRIS), unless turned off on the command line.
        public var mediaAllowed = true
        /// Where fetched documents go: `$XDG_CACHE_HOME/handoff/documents`.
        public var documentCache: String
        /// `$XDG_DATA_HOME`, where recently-used.xbel lives.
        public var dataHome: String = DefaultPaths.dataHome

        public init(configPath: String, userApplications: String, documentCache: String) {
            self.configPath = configPath
            self.userApplications = userApplications
            self.documentCache = documentCache
        }
    }

    let client: HandoffClient
    let settings: Settings
    let logger: Logger
    let loop = GLibLoop()
    /// How long a launched app must survive to count as started.
    static let startGrace: UInt64 = 400_000_000
    var policy = NotificationPolicy()
    var notifications: DesktopNotifications?
    private var wake: Task<Void, Never>?
    private var reportedProblems: Set<String> = []
    /// The media source (MPRIS): players, what plays, and the activity it made.
    var media: MediaPlayers?
    var mediaSource = MediaSource()
    var sources = SourceActivities()
    /// The event session the agent holds now (its activities belong to it).
    var sessionToken: String?
    /// The recent-documents source.
    var recent: RecentDocuments?
    /// Why there are no media players (no session bus), for `handoffctl sources`.
    var mediaProblem: String?
    /// The notification about pairing on screen, and what clicking it does.
    var pairingNotice: PairingNotice?
    /// logind's delay lock (nil: not taken, and `sleepProblem` says why).
    var sleepInhibitor: SleepInhibitor?
    var sleepProblem: String?
    var sleepWatch: Task<Void, Never>?
    /// The clipboard across workstations (`SessionAgent+Clipboard`).
    var clipboard = ClipboardBridge()
    /// The tray, the presence on the session bus and search (`SessionAgent+Presence`).
    var presence = PresenceKeeping()

    public init(client: HandoffClient, settings: Settings, logger: Logger) {
        self.client = client
        self.settings = settings
        self.logger = logger
    }

    public func run() async throws {
        policy.enabled = loadConfiguration().notifications && settings.notificationsAllowed
        if policy.enabled { await startNotifications() }
        await startPresence()
        var backoff: UInt64 = 1
        while !Task.isCancelled {
            do {
                let session = try await client.openSession()
                try await client.claimLauncher(session: session.token)
                logger.info("opening apps for handoffd", metadata: ["socket": "\(client.socketPath)"])
                backoff = 1
                sessionToken = session.token
                // Activities of an earlier session died with it: offer again what plays.
                sources.activityID = nil
                sources.foreignCurrent = nil
                sources.recentID = nil
                sources.recentOffered = nil
                if media?.isFollowing == true, let offer = mediaSource.offered { await applyMedia([.offer(offer)]) }
                if recent != nil { await recentChanged(atStart: true) }
                await reconcileSources(loadConfiguration())
                await guardSleep(session: session.token)
                await clipboardSessionStarted()
                await presenceSessionStarted()
                for try await event in session.events { await handle(event) }
                logger.warning("handoffd ended the event stream; connecting again")
                await presenceDaemonGone("it ended the event stream")
            } catch is CancellationError {
                return
            } catch {
                logger.warning("cannot reach handoffd; trying again in \(backoff) s", metadata: ["error": "\(error)"])
                await presenceDaemonGone("\(error)")
            }
            try await LoopSleep.sleep(nanoseconds: backoff * 1_000_000_000)
            backoff = min(backoff * 2, 30)
        }
    }

    private func handle(_ event: ControlEvent) async {
        presenceEvent(event)
        switch event {
        case .launchRequested(let launchID, let record, let device):
            // On its own: a launch may wait for an app or a download, and events (a
            // will-save for the media activity, say) must not queue behind it.
            Task {
                let outcome = await launch(record, from: device)
                do { try await client.answerLaunch(launchID, outcome) } catch {
                    logger.warning("could not tell handoffd what was opened", metadata: ["error": "\(error)"])
                }
            }
        case .peerOffer(let device, let summary):
            await perform(policy.offer(from: device, summary, at: SystemClock.now()))
        case .peerDisconnected(let device, _):
            await perform(policy.disconnected(device))
        case .willSave(let id, _):
            _ = await mediaWillSave(id.rawValue)
        case .wasContinued(let id, _):
            await mediaWasContinued(id.rawValue, pause: loadConfiguration().pauseOrigin)
        case .pairingAvailable(let name, let address):
            await offerPairing(name: name, address: address)
        case .pairing(let status):
            await pairingChanged(status)
        case .kdeConnectPairing(let device, let state, let message):
            await kdeConnectPairingChanged(device, state: state, message: message)
        case .sourcesRequested(let requestID, let change):
            Task { await answerSources(requestID, change) }
        case .becameCurrent, .resigned, .invalidated, .expired:
            await noteCurrent(event)
        case .clipboard(let record):
            await accountClipboard(record)
        case .clipboardRequested(let id, let type, let streamID, _):
            // On its own: the app that copied may take its time to hand over its data.
            Task { await serveClipboard(id, type: type, streamID: streamID) }
        default:
            break
        }
    }

    // MARK: - Launching

    func launch(_ record: ActivityRecord, from device: PeerDevice) async -> LaunchOutcome {
        let activity = record.activity
        let config = loadConfiguration()
        if activity.activityType == WellKnownActivityType.media {
            return await continueMedia(activity, from: device, config: config)
        }
        if activity.activityType == WellKnownActivityType.terminal {
            return await continueTerminal(activity, from: device)
        }
        let resolver = await currentResolver(overrides: config.handlers)
        var plan = resolver.plan(activityID: activity.id.rawValue, activityType: activity.activityType, webpageURL: activity.webpageURL)
        var environment = [
            ("HANDOFF_ACTIVITY_ID", activity.id.rawValue), ("HANDOFF_ACTIVITY_TYPE", activity.activityType),
            ("HANDOFF_DEVICE", device.name), ("HANDOFF_SOCKET", client.socketPath),
        ]
        var note: String?
        if activity.userInfo[DocumentReference.userInfoKey] != nil {
            // A document: find it here, or fetch a copy. A handler for the type gets it in
            // HANDOFF_DOCUMENT; otherwise the file opens in the default app for its type.
            let document: (path: String, note: String)
            switch await locateDocument(activity.id.rawValue, from: device, config: config) {
            case .failure(let f): return .failed(code: f.code, message: f.description)
            case .success(let d): document = d
            }
            note = document.note
            environment.append(("HANDOFF_DOCUMENT", document.path))
            if case .open(_, .handler, _) = plan {} else {
                let userApplications = settings.userApplications
                let path = document.path
                var recorded: String?
                if case .string(let a)? = activity.userInfo["application"] { recorded = a }
                let wanted = recorded
                // The app the origin's recent-files list recorded, if installed here and made
                // for the file's type; else the default app for the type. Never a program.
                let (app, uri, refused) = await loop.run { () -> (DesktopHandler?, String, String?) in
                    let (type, isProgram) = DesktopApps.contentType(ofFile: path)
                    if isProgram { return (nil, "", type) }
                    let recordedApp = wanted.flatMap { SessionAgent.recordedApp($0, among: DesktopApps.all(userApplications: userApplications).apps) }
                    let installed = recordedApp.flatMap { DesktopApps.supports($0.id, type: type) ? $0 : nil }
                    return (installed ?? DesktopApps.defaultApp(forFile: path, userApplications: userApplications), DesktopApps.fileURI(path), nil)
                }
                if let refused {
                    return .failed(code: "refused_program", message: "\(document.path) is a program or launcher (\(refused)): handoff does not open those for another workstation")
                }
                guard let app else {
                    return .failed(code: "no_handler", message: "no app here opens \(document.path) (no default app for its type); \(document.note)")
                }
                plan = .open(app: app, route: .document, uris: [uri])
            }
        }
        switch plan {
        case .nothing(let code, let message):
            logger.info("nothing to open", metadata: ["type": "\(activity.activityType)", "why": "\(code)"])
            return .failed(code: code, message: message)
        case .open(let app, let route, let uris):
            let loop = self.loop, environment = environment
            do {
                let launched = try await loop.run { try DesktopApps.launch(app.id, uris: uris, environment: environment, context: loop.context) }
                // An app that cannot really start (a missing library, a broken script) dies
                // within moments: that is a failure to report, not an app opened.
                if await loop.run({ !launched.pids.isEmpty }) {
                    try? await LoopSleep.sleep(nanoseconds: SessionAgent.startGrace)
                    if let failure = await loop.run({ DesktopApps.failure(of: launched, app.id) }) {
                        throw DesktopApps.LaunchFailure(description: failure)
                    }
                }
            } catch {
                logger.warning("launch failed", metadata: ["app": "\(app.id)", "error": "\(error)"])
                return .failed(code: "launch_failed", message: "\(error)")
            }
            logger.info("opened", metadata: ["app": "\(app.id)", "type": "\(activity.activityType)", "route": "\(route.rawValue)"])
            let launchedRoute: LaunchedApp.Route = switch route {
            case .handler: .handler
            case .domain: .domain
            case .browser: .browser
            case .document: .document
            }
            return .opened(LaunchedApp(route: launchedRoute, appID: app.id, appName: app.name, uri: uris.first, note: note))
        }
    }

    /// A terminal: checked again here (it came from another machine), then what handoffd
    /// decided continues it (ssh, mosh or a local shell in a synced folder; plain ssh when
    /// it says nothing) in the user's terminal emulator.
    func continueTerminal(_ activity: Activity, from device: PeerDevice) async -> LaunchOutcome {
        let session: TerminalSession
        do { session = try TerminalSession(userInfo: activity.userInfo) } catch {
            logger.warning("a terminal from another workstation was refused", metadata: ["device": "\(device.name)", "why": "\(error)"])
            return .failed(code: "invalid_terminal", message: "the terminal \(device.name) offered cannot be continued: \(error)")
        }
        var plan = TerminalContinuation(session)
        if case .success(let decided)? = try? await client.continuedActivity(activity.id.rawValue).terminal { plan = decided }
        let userApplications = settings.userApplications
        let entries = await loop.run { TerminalLauncher.entries(userApplications: userApplications) }
        guard let emulator = TerminalLauncher.emulator(path: TerminalLauncher.searchPath, entries: entries) else {
            return .failed(code: "no_terminal",
                           message: "no terminal emulator here (no xdg-terminal-exec, no desktop entry of a terminal, no x-terminal-emulator); run: \(plan.commandLine)")
        }
        do {
            try TerminalLauncher.launch(emulator, command: plan.argv, directory: plan.directory, environment: [
                ("HANDOFF_ACTIVITY_ID", activity.id.rawValue), ("HANDOFF_ACTIVITY_TYPE", activity.activityType), ("HANDOFF_DEVICE", device.name),
            ])
        } catch {
            return .failed(code: "launch_failed", message: "\(error)")
        }
        logger.info("opened a terminal", metadata: ["terminal": "\(emulator.name)", "route": "\(plan.route.rawValue)", "host": "\(session.host)"])
        let note = ([plan.note].compactMap { $0 } + [plan.commandLine]).joined(separator: "\n")
        return .opened(LaunchedApp(route: .terminal, appID: nil, appName: emulator.name, uri: nil, note: note))
    }

    func locateDocument(_ id: String, from device: PeerDevice, config: SessionConfiguration) async -> Result<(path: String, note: String), DocumentCache.Failure> {
        let document: ContinuedDocument
        do { document = try await client.continuedDocument(id) } catch {
            return .failure(DocumentCache.Failure(code: "bad_document", description: "\(error)"))
        }
        if document.state == "same", let path = document.localPath {
            return .success((path, "the document is your own copy in the synced folder: \(path)"))
        }
        let why = switch document.state {
        case "differs": "your copy at \(document.localPath ?? "?") differs from \(device.name)'s"
        case "missing": "it is not at \(document.localPath ?? "?") here (not synced yet?)"
        default: document.reason ?? "it is not in a folder synced here"
        }
        guard config.fetchDocuments else {
            return .failure(DocumentCache.Failure(code: "document_missing", description: "\(why); fetching copies is off (fetch-documents = no)"))
        }
        let cache = DocumentCache(directory: settings.documentCache, capacityBytes: config.documentCacheMB * 1_000_000)
        do {
            let (path, verified) = try await cache.fetch(id, document, client: client)
            let changed = verified ? "" : " (it changed on \(device.name) since it was offered)"
            logger.info("fetched a document", metadata: ["path": "\(path)", "why": "\(document.state)"])
            return .success((path, "opened a copy fetched from \(device.name)\(changed), because \(why): \(path)"))
        } catch let f as DocumentCache.Failure {
            return .failure(f)
        } catch {
            return .failure(DocumentCache.Failure(code: "document_fetch_failed", description: "\(error)"))
        }
    }

    func currentResolver(overrides: [String: String]) async -> HandlerResolver {
        let userApplications = settings.userApplications
        let (apps, problems, browser) = await loop.run {
            let (apps, problems) = DesktopApps.all(userApplications: userApplications)
            return (apps, problems, DesktopApps.defaultBrowser(userApplications: userApplications))
        }
        for p in problems where reportedProblems.insert(p).inserted { logger.warning("\(p)") }
        return HandlerResolver(handlers: apps, overrides: overrides, browser: browser)
    }

    func loadConfiguration() -> SessionConfiguration {
        do {
            return try SessionConfiguration.load(from: settings.configPath)
        } catch {
            if reportedProblems.insert("\(error)").inserted { logger.warning("\(error); using the defaults") }
            return SessionConfiguration()
        }
    }

    // MARK: - Notifications

    private func startNotifications() async {
        do {
            let n = try await DesktopNotifications(loop: loop)
            notifications = n
            Task { [weak self] in
                for await event in n.events { await self?.notificationEvent(event) }
            }
        } catch {
            logger.warning("no notifications: \(error)")
        }
    }

    private func perform(_ actions: [NotificationPolicy.Action]) async {
        guard let notifications else { return }
        for action in actions {
            switch action {
            case .show(let device, let summary, let replacing):
                let resolver = await currentResolver(overrides: loadConfiguration().handlers)
                let (icon, app) = resolver.icon(activityType: summary.activityType, webpageURL: summary.webpageURL)
                let title = summary.title.isEmpty ? summary.activityType : summary.title
                do {
                    let id = try await notifications.notify(
                        appName: "Handoff", summary: "Continue \u{201C}\(title)\u{201D}", body: "from \(device.name)",
                        icon: icon ?? "handoff", desktopEntry: app.map { String($0.dropLast(".desktop".count)) },
                        actions: [("default", "Continue")], replacing: replacing)
                    policy.shown(device, notification: id)
                } catch {
                    logger.warning("could not show a notification", metadata: ["error": "\(error)"])
                }
            case .close(let id):
                await notifications.close(id)
            case .wake(let at):
                wake?.cancel()
                let delay = max(0, SystemClock.now().nanoseconds(until: at))
                wake = Task { [weak self] in
                    try? await LoopSleep.sleep(nanoseconds: UInt64(delay))
                    guard !Task.isCancelled else { return }
                    await self?.wakeUp()
                }
            }
        }
    }

    private func wakeUp() async {
        await perform(policy.wake(at: SystemClock.now()))
    }

    private func notificationEvent(_ event: DesktopNotifications.Event) async {
        switch event {
        case .closed(let id):
            policy.closed(notification: id)
            if id == pairingNotice?.id { pairingNotice = nil }
        case .actionInvoked(let id, let action):
            if id == pairingNotice?.id {
                await pairingAction(action)
                return
            }
            guard action == "default", let (device, activity) = policy.target(of: id) else { return }
            await notifications?.close(id)
            do {
                let continued = try await client.continueActivity(from: device.id, id: activity.rawValue, launch: true)
                if case .failed(_, let message)? = continued.launch { await tellFailure(message) }
            } catch {
                await tellFailure("\(error)")
            }
        }
    }

    /// What the user asked from a notification, the tray or search did not happen: said
    /// in a notification, as nobody waits for an answer there.
    func tellFailure(_ message: String, summary: String = "Could not continue") async {
        logger.warning("\(summary.lowercased()) (asked from the desktop)", metadata: ["error": "\(message)"])
        _ = try? await notifications?.notify(appName: "Handoff", summary: summary, body: message, icon: "dialog-error",
                                             desktopEntry: nil, actions: [], replacing: nil)
    }
}
