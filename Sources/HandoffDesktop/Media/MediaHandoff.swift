import FoundationEssentials
import HandoffClient
import HandoffCore
import HandoffControlAPI

/// The desktop sources' state in the agent: the activities they made (media: for which
/// player; recent documents: for which entry), and whether an app's own activity is
/// current (then the sources keep out of the way).
struct SourceActivities {
    var activityID: String?
    var player: String?
    var recentID: String?
    var recentOffered: RecentDocuments.Entry?
    /// An activity some app made current itself: never displaced by the source.
    var foreignCurrent: String?
    /// The last activities the sources made (a few: older ones are long over).
    var ours: [String] = []

    mutating func remember(_ id: String) {
        ours.append(id)
        if ours.count > 16 { ours.removeFirst(ours.count - 16) }
    }
}

extension SessionAgent {
    // MARK: - Origin: what plays becomes the current activity

    /// The players' connection, made once; its events are handled from then on.
    func mediaPlayers() async -> MediaPlayers? {
        if let media { return media }
        do {
            let players = try await MediaPlayers(loop: loop)
            media = players
            Task { [weak self] in
                for await event in players.events { await self?.mediaEvent(event) }
            }
            return players
        } catch {
            logger.warning("no media players: \(error)")
            mediaProblem = "\(error)"
            return nil
        }
    }

    /// The media source on: follow the players, and offer what plays.
    func startMedia() async {
        guard let players = await mediaPlayers() else { return }
        let names = await loop.run { players.follow(); return players.listPlayers() }
        for name in names { await mediaChanged(name) }
    }

    /// The media source off: stop listening, and end the activity it made.
    func stopMedia() async {
        guard let players = media else { return }
        await loop.run { players.unfollow() }
        mediaSource = MediaSource()
        if let id = sources.activityID {
            sources.activityID = nil
            _ = try? await client.invalidate(id)
        }
    }

    func mediaEvent(_ event: MediaPlayers.Event) async {
        switch event {
        case .changed(let name): await mediaChanged(name)
        case .gone(let name): await applyMedia(mediaSource.gone(name))
        case .seeked(let name, let position): mediaSource.seeked(name, to: position, at: SystemClock.now())
        }
    }

    private func mediaChanged(_ name: String) async {
        guard let players = media else { return }
        let state = await loop.run { players.state(of: name) }
        await applyMedia(mediaSource.changed(name, state, at: SystemClock.now()))
    }

    func applyMedia(_ actions: [MediaSource.Action]) async {
        guard let session = sessionToken else { return }
        for action in actions {
            do {
                switch action {
                case .offer(let offer):
                    guard sources.foreignCurrent == nil else { continue }  // an app's own activity stays
                    if let old = sources.activityID { _ = try? await client.invalidate(old) }
                    var draft = mediaDraft(offer)
                    if let players = media, let entry = await loop.run({ players.root(of: offer.player, scheme: "file").desktopEntry }) {
                        draft.userInfo["playerDesktopEntry"] = .string(entry)
                    }
                    let record = try await client.becomeCurrent(draft, session: session, document: localFile(offer.url))
                    sources.activityID = record.activity.id.rawValue
                    sources.player = offer.player
                    sources.remember(record.activity.id.rawValue)
                    logger.info("media playing: offered", metadata: ["player": "\(offer.player)", "url": "\(offer.url)"])
                case .update(let offer):
                    guard let id = sources.activityID else { continue }
                    var update = ActivityUpdate()
                    update.userInfo = ["playing": .boolean(offer.playing)]
                    _ = try await client.update(id, update)
                case .withdraw:
                    guard let id = sources.activityID else { continue }
                    sources.activityID = nil
                    _ = try await client.invalidate(id)
                }
            } catch {
                logger.warning("media source: could not update the activity", metadata: ["error": "\(error)"])
            }
        }
    }

    private func mediaDraft(_ offer: MediaSource.Offer) -> ActivityDraft {
        var draft = ActivityDraft(activityType: WellKnownActivityType.media)
        draft.title = [offer.title, offer.artist].compactMap { $0 }.joined(separator: " — ")
        if draft.title.isEmpty { draft.title = String(offer.url.split(separator: "/").last ?? "media") }
        let position = mediaSource.position(of: offer.player, at: SystemClock.now())
        var info: UserInfo = ["url": .url(offer.url), "positionMicroseconds": .integer(position ?? 0), "positionKnown": .boolean(position != nil),
                              "playing": .boolean(offer.playing)]
        if let t = offer.title { info["title"] = .string(t) }
        if let a = offer.artist { info["artist"] = .string(a) }
        if let l = offer.length { info["lengthMicroseconds"] = .integer(l) }
        draft.userInfo = info
        draft.requiredUserInfoKeys = ["url", "positionMicroseconds"]
        // Where it plays is worked out when another workstation takes it.
        draft.needsSave = true
        if offer.url.hasPrefix("http://") || offer.url.hasPrefix("https://") { draft.webpageURL = offer.url }
        return draft
    }

    /// A local file plays elsewhere through the synced-folder mapping, or a fetched copy.
    private func localFile(_ url: String) -> String? {
        guard url.hasPrefix("file://"), let u = URL(string: url), u.isFileURL else { return nil }
        return u.path
    }

    /// will-save for the media activity: the position now.
    func mediaWillSave(_ id: String) async -> Bool {
        guard id == sources.activityID, let player = sources.player else { return false }
        var update = ActivityUpdate()
        let position = mediaSource.position(of: player, at: SystemClock.now())
        update.userInfo = ["positionMicroseconds": .integer(position ?? 0), "positionKnown": .boolean(position != nil)]
        update.needsSave = true  // it keeps moving
        _ = try? await client.update(id, update)
        return true
    }

    /// The user took it elsewhere: pause here, as someone moving rooms expects.
    func mediaWasContinued(_ id: String, pause: Bool) async {
        guard pause, id == sources.activityID, let player = sources.player, let players = media else { return }
        let paused = await loop.run { players.command(player, "Pause") }
        logger.info("media continued elsewhere", metadata: ["paused": "\(paused)", "player": "\(player)"])
    }

    func noteCurrent(_ event: ControlEvent) async {
        switch event {
        case .becameCurrent(let r):
            let id = r.activity.id.rawValue
            sources.foreignCurrent = sources.ours.contains(id) ? nil : id
        case .resigned(let r), .expired(let r), .invalidated(let r, _):
            if r.activity.id.rawValue == sources.foreignCurrent {
                sources.foreignCurrent = nil
                if let offer = mediaSource.offered { await applyMedia([.offer(offer)]) }
            }
            if r.activity.id.rawValue == sources.recentID, case .invalidated = event { sources.recentID = nil }
            if r.activity.id.rawValue == sources.activityID, case .invalidated = event { sources.activityID = nil }
        default:
            break
        }
    }

    // MARK: - Continuing: play it here, from where it was

    func continueMedia(_ activity: Activity, from device: PeerDevice, config: SessionConfiguration) async -> LaunchOutcome {
        var url: String
        switch activity.userInfo["url"] {
        case .url(let s)?, .string(let s)?: url = s
        default: return .failed(code: "bad_media", message: "the media activity has no url")
        }
        // Only what a media player should get from another machine.
        let lower = url.lowercased()
        guard lower.hasPrefix("file://") || lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            return .failed(code: "bad_media", message: "media from another workstation plays only from file, http or https URLs")
        }
        var position: Int64 = 0
        if case .integer(let p)? = activity.userInfo["positionMicroseconds"] { position = max(0, p) }
        var note: String?
        if activity.userInfo[DocumentReference.userInfoKey] != nil {
            switch await locateDocument(activity.id.rawValue, from: device, config: config) {
            case .failure(let f): return .failed(code: f.code, message: f.description)
            case .success(let d):
                url = DesktopApps.fileURI(d.path)
                note = d.note
            }
        }
        guard let players = await mediaPlayers() else {
            return .failed(code: "no_player", message: "no session bus to reach media players on")
        }
        let scheme = String(url.prefix { $0 != ":" }).lowercased()
        var entry: String?
        if case .string(let e)? = activity.userInfo["playerDesktopEntry"] { entry = e }
        let originEntry = entry, target = url, start = position
        // A running player that is not idle: the origin's kind if it runs here, else any
        // that takes the URI's scheme. (An idle mpv takes OpenUri but never starts.)
        let running: (names: [String], choice: String?) = await loop.run {
            let names = players.listPlayers()
            let usable = names.compactMap { name -> (String, String?, Bool)? in
                guard let s = players.state(of: name), s.url != nil else { return nil }
                let root = players.root(of: name, scheme: scheme)
                return (name, root.desktopEntry, root.supports)
            }
            return (names, usable.first { originEntry != nil && $0.1 == originEntry }?.0 ?? usable.first { $0.2 }?.0)
        }
        let player: String
        var before: String?
        if let choice = running.choice {
            player = choice
            before = await loop.run { players.state(of: choice)?.trackID }
            guard await loop.run({ players.openURI(choice, target) }) else {
                return .failed(code: "launch_failed", message: "\(choice) refused to open \(target)")
            }
        } else {
            // None: start the origin's player if it is installed here, else the default
            // app for the media, and wait for it to appear on the bus with the media.
            let userApplications = settings.userApplications
            let path = target.hasPrefix("file://") ? (URL(string: target)?.path ?? "") : ""
            // The user's default app for the media's type; the origin's choice of player
            // only decides among players already running.
            let app: DesktopHandler? = await loop.run {
                path.isEmpty ? nil : DesktopApps.defaultApp(forFile: path, userApplications: userApplications)
            }
            guard let app else {
                return .failed(code: "no_player", message: "no media player here plays \(target): install one that speaks MPRIS (e.g. mpv with mpv-mpris), or start it")
            }
            let loop = self.loop
            let environment = [("HANDOFF_ACTIVITY_ID", activity.id.rawValue), ("HANDOFF_DEVICE", device.name)]
            do {
                _ = try await loop.run { try DesktopApps.launch(app.id, uris: [target], environment: environment, context: loop.context) }
            } catch {
                return .failed(code: "launch_failed", message: "\(error)")
            }
            var appeared: String?
            for _ in 0..<100 {
                appeared = await loop.run {
                    players.listPlayers().first { !running.names.contains($0) && players.state(of: $0)?.url != nil }
                }
                if appeared != nil { break }
                try? await LoopSleep.sleep(nanoseconds: 100_000_000)
            }
            guard let appeared else {
                return .failed(code: "launch_failed", message: "\(app.name) started but did not show up as a media player (MPRIS) within 10 s; it plays from the start, if at all")
            }
            player = appeared
        }
        // SetPosition needs the new track's id: wait for it (5 s at most).
        var track: String?
        for _ in 0..<50 {
            let s = await loop.run { players.state(of: player) }
            if let s, let id = s.trackID, s.url == target || (before != nil && id != before) { track = id; break }
            try? await LoopSleep.sleep(nanoseconds: 100_000_000)
        }
        let name = String(player.dropFirst(MediaPlayers.prefix.count))
        guard let track else {
            return .failed(code: "launch_failed", message: "\(name) did not start playing \(url)")
        }
        var notes = [note].compactMap { $0 }
        if case .boolean(false)? = activity.userInfo["positionKnown"] {
            notes.append("\(device.name)'s player does not say where it is (no MPRIS Position), so it plays from the start")
        }
        _ = await loop.run { players.command(player, "Play") }
        if position > 0 {
            // A player may take SetPosition before the media is ready to seek and ignore it:
            // check where it is, and ask again (3 s at most).
            var seeked = false
            for _ in 0..<15 {
                guard await loop.run({ players.setPosition(player, trackID: track, start) }) else { break }
                try? await LoopSleep.sleep(nanoseconds: 200_000_000)
                if let now = await loop.run({ players.state(of: player)?.position }), abs(now - start) < 2_000_000 {
                    seeked = true
                    break
                }
            }
            if !seeked {
                notes.append("\(name) did not move to \(Self.minutesAndSeconds(start)) (it ignores SetPosition or reports no position): it plays from where it started")
            }
        }
        logger.info("media continued", metadata: ["player": "\(player)", "position": "\(position)"])
        return .opened(LaunchedApp(route: .handler, appID: nil, appName: name, uri: url,
                                   note: (["playing from \(Self.minutesAndSeconds(position))"] + notes).joined(separator: "; ")))
    }

    /// A position in microseconds as M:SS.
    static func minutesAndSeconds(_ microseconds: Int64) -> String {
        let seconds = microseconds / 1_000_000 % 60
        return "\(microseconds / 60_000_000):\(seconds < 10 ? "0" : "")\(seconds)"
    }
}
