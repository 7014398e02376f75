import FoundationEssentials
import HandoffClient
import HandoffControlAPI
import HandoffCore
import Logging
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// What the agent keeps for the presence (Docs/Desktop.md, "Presence").
struct PresenceKeeping {
    var bus: PresenceBus?
    var problem: String?
    var state = Presence()
    var host: StatusNotifierItem.HostState?
    /// GNOME Shell runs in this session; handoff's extension shows the presence in it.
    var gnomeShell = false
    var shellExtension = false
    /// Refreshes asked for while one runs: it runs again for them, and those who asked
    /// wait for that run (`waiting`).
    var wantOffers = false
    var wantChecks = false
    var refreshing = false
    var waiting: [CheckedContinuation<Void, Never>] = []
    /// Each publication's number: the bus drops one that arrives after a newer one.
    var published: UInt64 = 0
    /// The history was off at the last search that heard from it: a search that does not
    /// hear from it in time finds nothing either.
    var historyOff = false
    /// A new identity is on its way: a second click must not retire the new one too.
    var renewing = false
    /// Searches waiting for the history now: a flood of queries does not become a flood
    /// of history requests (beyond `maximumHistorySearches`, the offers alone answer).
    var historySearches = 0
    var commands: Task<Void, Never>?
}

/// The presence in the panel and search from the shell: the agent keeps a `Presence`
/// current from handoffd's events and answers, shows it (`PresenceBus`), and does what
/// the user asks there through handoffd's API, as `handoffctl` would.
extension SessionAgent {
    func startPresence() async {
        let bus = PresenceBus(loop: loop)
        do { try await loop.run { try bus.start() } } catch {
            presence.problem = "\(error)"
            logger.warning("no presence on the session bus (no tray, no search)", metadata: ["error": "\(error)"])
            return
        }
        presence.bus = bus
        presence.commands = Task { [weak self] in
            for await command in bus.commands {
                // Each on its own: a search must not wait behind an app that takes its time to open.
                Task { await self?.presenceCommand(command) }
            }
        }
        await applyTray(loadConfiguration())
    }

    /// Shows or hides the tray as the settings say.
    func applyTray(_ config: SessionConfiguration) async {
        guard let bus = presence.bus else { return }
        do { try await loop.run { try bus.setTray(config.tray) } } catch {
            logger.warning("no tray icon", metadata: ["error": "\(error)"])
            presence.host = .failed("\(error)")
        }
    }

    func presenceTrayShown() async -> Bool {
        guard let bus = presence.bus else { return false }
        return await loop.run { bus.trayShown }
    }

    /// A new event session: everything is read again.
    func presenceSessionStarted() async {
        presence.state.clipboard = try? await client.clipboard()
        presence.state.pairing = Presence.pairing(try? await client.pairingStatus())
        await refreshPresence(offers: true, checks: true)
    }

    /// handoffd went away: nothing is offered until it is back, and the menu says why.
    func presenceDaemonGone(_ why: String) async {
        presence.state.offers = []
        presence.state.clipboard = nil
        presence.state.pairing = nil
        presence.state.problems = [Presence.Problem(id: "daemon", detail: "handoffd is not running (\(why))",
                                                    fix: "systemctl --user start handoffd")]
        await publishPresence()
    }

    /// An event from handoffd. What it says is taken now, in the order events come; what
    /// must be read from handoffd is read on its own, so the agent's events (a launch)
    /// never wait for it.
    func presenceEvent(_ event: ControlEvent) {
        guard presence.bus != nil else { return }
        var offers = false, checks = false
        switch event {
        case .peerOffer:
            offers = true
        case .peerConnected, .peerDisconnected:
            (offers, checks) = (true, true)
        case .clipboard(let record):
            presence.state.clipboard = record
        case .pairing(let status):
            presence.state.pairing = Presence.pairing(status)
            checks = status.state == .paired
        case .kdeConnectPairing:
            checks = true
        default:
            return
        }
        Task { await self.refreshPresence(offers: offers, checks: checks) }
    }

    /// Reads what changed from handoffd (the offers, doctor's checks), then shows it;
    /// returns once what was asked is shown. A refresh asked for while one runs is folded
    /// into the next run, which its caller waits for.
    func refreshPresence(offers: Bool = false, checks: Bool = false) async {
        presence.wantOffers = presence.wantOffers || offers
        presence.wantChecks = presence.wantChecks || checks
        guard !presence.refreshing else {
            await withCheckedContinuation { presence.waiting.append($0) }
            return
        }
        presence.refreshing = true
        var pass = true
        while pass {
            let (o, c) = (presence.wantOffers, presence.wantChecks)
            presence.wantOffers = false
            presence.wantChecks = false
            let waiters = presence.waiting
            presence.waiting = []
            if o, let listed = try? await client.offers() {
                let resolver = await currentResolver(overrides: loadConfiguration().handlers)
                presence.state.offers = Presence.offers(listed, at: SystemClock.now()) { summary in
                    guard case .open(let app, _, _) = resolver.plan(activityID: "", activityType: summary.activityType, webpageURL: summary.webpageURL)
                    else { return nil }
                    return Presence.App(id: app.id, name: app.name, icon: app.icon)
                }
            }
            if c {
                if let checks = try? await client.diagnostics() { presence.state.problems = Presence.problems(checks) }
                if let devices = try? await client.devices(), let me = try? await client.status().deviceID {
                    presence.state.removed = devices.removed.contains { $0.id == me }
                }
                // KDE Connect's devices (none while it is off): asked with the checks, which
                // the menu's opening and pairing changes ask for.
                presence.state.phones = ((try? await client.kdeConnect())?.devices ?? []).filter {
                    ($0.paired && $0.reachable) || $0.pairing == "requested-by-peer"
                }
            }
            await publishPresence()
            for w in waiters { w.resume() }
            pass = presence.wantOffers || presence.wantChecks || !presence.waiting.isEmpty
        }
        presence.refreshing = false
    }

    /// Shows the presence as it is now: properties, icon, menu (only what changed).
    func publishPresence() async {
        guard let bus = presence.bus else { return }
        let config = loadConfiguration()
        presence.state.sources = DesktopSource.names.filter { $0 != "tray" }
        presence.state.sourcesOff = presence.state.sources.filter { name in
            switch name {
            case "media": !(config.media && settings.mediaAllowed)
            case "recent-documents": !config.recentDocuments
            case "browser": !config.browser
            case "clipboard": !config.clipboard
            default: false
            }
        }
        let now = SystemClock.now()
        let entries = PresenceMenu.entries(presence.state, at: now)
        let properties = PresenceInterface.properties(of: presence.state, tray: trayDetail(config).detail, at: now)
        var shown = Self.look(presence.state)
        // One icon: while handoff's GNOME Shell extension shows the presence in GNOME's
        // panel, the tray item stays registered but passive, which the AppIndicator
        // extension hides (the SNI's "nothing to show" state). Withdrawing it instead raced
        // the AppIndicator extension still registering it, which then logged an error.
        shown.passive = presence.shellExtension
        let look = shown
        presence.published += 1
        let sequence = presence.published
        await loop.run { bus.show(sequence, properties: properties, look: look, menu: entries) }
    }

    /// The icon says whether something waits; the tooltip what.
    static func look(_ p: Presence) -> StatusNotifierItem.Look {
        var look = StatusNotifierItem.Look()
        guard let newest = p.offers.first else {
            look.tooltipBody = "Nothing to continue from your other workstations"
            return look
        }
        look.iconName = "handoff-available"
        let from = newest.device.name.isEmpty ? "another workstation" : newest.device.name
        var body = "Continue " + MenuText.quoted(newest.title) + " from " + MenuText.line(from, limit: 32)
        if p.offers.count > 1 { body += " (and \(p.offers.count - 1) more)" }
        // Plasma renders the body as rich text: what other machines wrote is escaped.
        look.tooltipBody = MenuText.escaped(body)
        look.accessibleDescription = "Handoff: " + body
        return look
    }

    /// What doctor and `handoffctl sources` say of the tray: where the presence shows, or
    /// what this desktop needs. handoff's GNOME Shell extension shows it without a tray, so
    /// in GNOME a missing tray is not a problem while the extension runs (and the tray
    /// icon is hidden then: `publishPresence`).
    func trayDetail(_ config: SessionConfiguration) -> (detail: String, fix: String?) {
        let extensionNote = presence.shellExtension ? "; handoff's GNOME Shell extension shows it in GNOME's panel" : ""
        if !config.tray {
            return ("off (tray = no in \(settings.configPath))" + extensionNote, nil)
        }
        if let problem = presence.problem { return ("not working: \(problem)", "check that the session bus runs (DBUS_SESSION_BUS_ADDRESS)") }
        if presence.shellExtension {
            return ("shown in GNOME's panel by handoff's GNOME Shell extension (the tray icon is hidden while it shows, "
                    + "so that GNOME shows one icon)", nil)
        }
        switch presence.host {
        case .registered(let pid)?:
            let name = pid.flatMap { Self.processName($0) }
            return ("shown in the panel" + (name.map { " by \($0)" } ?? ""), nil)
        case .failed(let why)?:
            return ("the panel refused the icon: \(why)", "restart the panel, or turn the tray off: handoffctl sources off tray")
        case .none?, nil:
            let none = "no panel here shows tray icons (nothing owns org.kde.StatusNotifierWatcher); notifications say what is offered"
            // GNOME Shell on the bus is GNOME whatever the session calls itself.
            return (none, (presence.gnomeShell ? .gnome : Self.desktopKind).trayFix)
        }
    }

    /// The name of the panel that owns the watcher: its executable's. xfce4-panel runs
    /// its plugins in `wrapper-2.0` processes: their parent is the panel people know.
    private static func processName(_ pid: UInt32) -> String? {
        func executable(_ pid: String) -> String? {
            var buffer = [CChar](repeating: 0, count: 4096)
            let n = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
            guard n > 0 else { return nil }
            let path = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return path.split(separator: "/").last.map(String.init)
        }
        guard let name = executable("\(pid)") else { return nil }
        // Plasma's watcher is a module of kded, its daemon; the tray people see is Plasma's.
        if name.hasPrefix("kded") { return "KDE Plasma's system tray" }
        guard name.hasPrefix("wrapper-"), let stat = FileManager.default.contents(atPath: "/proc/\(pid)/stat"),
              let close = stat.lastIndex(of: UInt8(ascii: ")")) else { return name }
        // "PID (comm) STATE PPID ...": the parent after the state.
        let fields = String(decoding: stat[(close + 1)...], as: UTF8.self).split(separator: " ")
        return fields.count > 1 ? executable(String(fields[1])) ?? name : name
    }

    // MARK: - What the user does there

    func presenceCommand(_ command: PresenceBus.Command) async {
        switch command {
        case .menuClicked(let key):
            guard let action = PresenceMenu.action(forKey: key, in: presence.state) else { return }
            if let failure = await perform(action) { await tellFailure(failure, summary: action.failure) }
        case .activate:
            await activate()
        case .menuOpened:
            await refreshPresence(offers: true, checks: true)
        case .trayHost(let state):
            presence.host = state
            logger.info("tray", metadata: ["host": "\(state)"])
            await publishPresence()
        case .gnomeShell(let running):
            presence.gnomeShell = running
            await publishPresence()
        case .shellExtension(let shown):
            presence.shellExtension = shown
            logger.info("GNOME Shell extension", metadata: ["shown": "\(shown)"])
            await publishPresence()
        case .search(let query, let invocation):
            await answerSearch(query, invocation)
        case .activateResult(let result):
            let failure: String?
            switch result {
            case .offer(let device, let id): failure = await continueOffer(device, id)
            case .history(let entry):
                do { _ = try await client.reopenHistoryEntry(entry); failure = nil } catch { failure = "\(error)" }
            }
            if let failure { await tellFailure(failure) }
        case .presence(let method, let a, let invocation):
            await presenceMethod(method, a, invocation)
        }
    }

    /// A left click on the icon, or the Handoff launcher: the newest offer continues here;
    /// what went wrong is shown, as nobody waits for an answer.
    func activate() async {
        guard let newest = presence.state.offers.first else {
            _ = try? await notifications?.notify(appName: "Handoff", summary: "Nothing to continue",
                                                 body: "Your other workstations offer nothing now.", icon: "handoff",
                                                 desktopEntry: nil, actions: [], replacing: nil)
            return
        }
        if let failure = await continueOffer(newest.device.id, newest.activity.id.rawValue) { await tellFailure(failure) }
    }

    private func presenceMethod(_ method: String, _ a: [DBusValue], _ invocation: DBusInvocation) async {
        switch method {
        case "Activate":
            await invocation.reply([])
            // A launcher started the agent just now: what is offered is not read yet.
            if presence.state.offers.isEmpty { await refreshPresence(offers: true) }
            await activate()
        case "Continue":
            var device = a[0].string ?? "", id = a[1].string ?? ""
            if device.isEmpty && id.isEmpty, let newest = presence.state.offers.first {
                (device, id) = (newest.device.id, newest.activity.id.rawValue)
            }
            guard !id.isEmpty || !device.isEmpty else { return await invocation.fail("NothingOffered", "nothing to continue") }
            if let failure = await continueOffer(device, id) { return await invocation.fail("Failed", failure) }
            await invocation.reply([.string("continued")])
        case "Paste":
            guard let copy = presence.state.foreignCopy(at: SystemClock.now()) else {
                return await invocation.fail("NothingCopied", "no other workstation copied anything lately")
            }
            if let failure = await perform(.paste(copy.id)) { return await invocation.fail("Failed", failure) }
            await invocation.reply([.string("ready to paste")])
        case "Pair":
            if let failure = await perform(a[0].boolValue == true ? .pairWithNewIdentity : .pair) { return await invocation.fail("Failed", failure) }
            await invocation.reply([.string("pairing")])
        case "StopPairing":
            _ = await perform(.stopPairing)
            await invocation.reply([])
        case "SetSource":
            do { _ = try await client.setSource(a[0].string ?? "", enabled: a[1].boolValue ?? true) } catch {
                return await invocation.fail("Failed", "\(error)")
            }
            await invocation.reply([])
        case "Refresh":
            await refreshPresence(offers: true, checks: true)
            await invocation.reply([])
        default:
            await invocation.fail("UnknownMethod", method)
        }
    }

    /// Does what an entry of the menu says; returns what went wrong, for the user.
    func perform(_ action: PresenceMenu.Action) async -> String? {
        switch action {
        case .continueOffer(let device, let id):
            return await continueOffer(device, id)
        case .continueOnPhone(let device):
            do { _ = try await client.sendToKDEConnect(device) } catch { return "\(error)" }
            return nil
        case .acceptPhone(let device), .rejectPhone(let device):
            let answer: KDEConnectDeviceRequest.Action = if case .acceptPhone = action { .accept } else { .reject }
            do { _ = try await client.kdeConnect(device, KDEConnectDeviceRequest(action: answer)) } catch { return "\(error)" }
            await refreshPresence(checks: true)
            return nil
        case .paste(let id):
            guard let record = presence.state.clipboard, record.id == id, !record.local else { return "that copy is not the newest any more" }
            return await offerHere(record)
        case .pair:
            do { _ = try await client.openPairing() } catch { return "\(error)" }
            return nil
        case .pairWithNewIdentity:
            // Once: a second click while the first one's renewal runs would retire the new
            // identity too, and close the window the first one opens.
            guard !presence.renewing else { return nil }
            presence.renewing = true
            defer { presence.renewing = false }
            do {
                // An open window would pair the identity about to be set aside.
                _ = try? await client.cancelPairing()
                let renewal = try await client.renewIdentity()
                logger.notice("this workstation has a new identity; pairing", metadata: ["previous": "\(renewal.previousID)", "kept": "\(renewal.keptAt)"])
                presence.state.removed = false
                await publishPresence()
                _ = try await client.waitForNewIdentity(previous: renewal.previousID)
                _ = try await client.openPairing()
            } catch { return "\(error)" }
            return nil
        case .stopPairing:
            _ = try? await client.cancelPairing()
            return nil
        case .setSource(let name, let enabled):
            do { _ = try await client.setSource(name, enabled: enabled) } catch { return "\(error)" }
            return nil
        case .explain(let problemID):
            guard let p = presence.state.problems.first(where: { $0.id == problemID }) else { return nil }
            _ = try? await notifications?.notify(appName: "Handoff", summary: MenuText.line(p.detail, limit: 80),
                                                 body: p.detail + (p.fix.map { "\n\nWhat to do: \($0)" } ?? ""),
                                                 icon: "dialog-warning", desktopEntry: nil, actions: [], replacing: nil)
            return nil
        }
    }

    /// Continues an offer and opens it, as `handoffctl continue --from DEVICE ID` does.
    func continueOffer(_ device: String, _ id: String) async -> String? {
        do {
            let continued = try await client.continueActivity(from: device.isEmpty ? nil : device, id: id.isEmpty ? nil : id, launch: true)
            if case .failed(_, let message)? = continued.launch { return message }
            return nil
        } catch {
            return "\(error)"
        }
    }
}
