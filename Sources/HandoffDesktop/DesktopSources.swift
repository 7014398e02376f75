import FoundationEssentials
import HandoffClient
import HandoffControlAPI

/// The desktop sources (media, recent documents, browser tabs) as `handoffctl sources`
/// sees them: handoffd relays `sources-requested`, the agent makes the change (the
/// setting is written to handoff-session.conf, so it lasts), brings the sources in line
/// with the settings (a file edited by hand counts too) and says what each does.
extension SessionAgent {
    func answerSources(_ requestID: String, _ change: DesktopSourceChange?) async {
        let result: Result<[DesktopSource], SourceChangeError>
        do {
            if let change {
                try writeSetting(change)
                if change.source == "browser" && !change.enabled { await endBrowserTabs() }
            }
            let config = loadConfiguration()
            await reconcileSources(config)
            result = .success(await describeSources(config))
        } catch let e as SourceChangeError {
            result = .failure(e)
        } catch {
            result = .failure(SourceChangeError(code: "settings_unwritable", message: "\(error)"))
        }
        do { try await client.answerSources(requestID, result) } catch {
            logger.warning("could not tell handoffd about the sources", metadata: ["error": "\(error)"])
        }
    }

    /// Starts or stops each source as the settings say.
    func reconcileSources(_ config: SessionConfiguration) async {
        let wantMedia = config.media && settings.mediaAllowed
        let following = media?.isFollowing ?? false
        if wantMedia && !following {
            await startMedia()
        } else if !wantMedia && following {
            await stopMedia()
            logger.info("media source off")
        }
        if config.recentDocuments && recent == nil {
            await startRecentDocuments()
        } else if !config.recentDocuments, let r = recent {
            recent = nil
            await r.stop()
            sources.recentOffered = nil
            if let id = sources.recentID {
                sources.recentID = nil
                _ = try? await client.invalidate(id)
            }
            logger.info("recent-documents source off")
        }
        if config.clipboard && clipboard.desktop == nil {
            startClipboard()
        } else if !config.clipboard, clipboard.desktop != nil {
            await stopClipboard()
            logger.info("clipboard off")
        }
        // The browser's host reads the setting itself, with each tab it is told about.
        if config.tray != (await presenceTrayShown()) { await applyTray(config) }
        await publishPresence()
    }

    /// The host learns of `browser = no` with the next tab; the offer it made ends now.
    private func endBrowserTabs() async {
        guard let records = try? await client.activities() else { return }
        for r in records where r.activity.userInfo[BrowserTab.sourceKey] == .string("browser") {
            _ = try? await client.invalidate(r.activity.id.rawValue)
        }
    }

    private func writeSetting(_ change: DesktopSourceChange) throws {
        guard DesktopSource.names.contains(change.source) else {
            throw SourceChangeError(code: "unknown_source", message: "no source \"\(change.source)\": the sources are \(DesktopSource.names.joined(separator: ", "))")
        }
        let path = settings.configPath
        let text = FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let updated = SessionConfiguration.setting(change.source, to: change.enabled ? "yes" : "no", in: text)
        do {
            try FileManager.default.createDirectory(atPath: String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]), withIntermediateDirectories: true)
            try updated.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw SourceChangeError(code: "settings_unwritable", message: "cannot write \(path): \(error)")
        }
        logger.info("source setting changed", metadata: ["source": "\(change.source)", "enabled": "\(change.enabled)"])
    }

    func describeSources(_ config: SessionConfiguration) async -> [DesktopSource] {
        let file = settings.configPath
        let waiting = sources.foreignCurrent != nil ? "; an app's own activity is current, so it waits" : ""
        var list: [DesktopSource] = []

        var media: String
        if !config.media {
            media = "off (media = no in \(file))"
        } else if !settings.mediaAllowed {
            media = "off (handoff-session runs with --no-media)"
        } else if let problem = mediaProblem, self.media == nil {
            media = "not working: \(problem)"
        } else {
            let count = mediaSource.players.count
            media = "following \(count) player\(count == 1 ? "" : "s")"
            if let offer = mediaSource.offered, sources.activityID != nil {
                let name = offer.player.dropFirst(MediaPlayers.prefix.count)
                media += "; offering \u{201C}\(offer.title ?? offer.url)\u{201D} (\(name))"
            } else {
                media += "; nothing playing"
            }
            media += waiting
        }
        list.append(DesktopSource(name: "media", enabled: config.media && settings.mediaAllowed, detail: media))

        var recentDetail: String
        if !config.recentDocuments {
            recentDetail = "off (recent-documents = no in \(file))"
        } else {
            recentDetail = "watching \(recent?.file ?? settings.dataHome + "/recently-used.xbel")"
            let folders = (try? await client.syncedRootPaths()) ?? []
            if folders.isEmpty {
                recentDetail += "; no synced folders here, so nothing is offered"
            } else if let offered = sources.recentOffered, sources.recentID != nil {
                recentDetail += "; offering \(offered.path)"
            } else {
                recentDetail += "; \(folders.count) synced folder\(folders.count == 1 ? "" : "s")"
            }
            recentDetail += waiting
        }
        list.append(DesktopSource(name: "recent-documents", enabled: config.recentDocuments, detail: recentDetail))

        var browser: String
        if !config.browser {
            browser = "off (browser = no in \(file)): the extension's tabs are not offered"
        } else {
            let installed = BrowserExtension.installedHosts()
            browser = installed.isEmpty
                ? "the extension's host is not installed: run `handoff-browser-host --install` (Docs/Desktop.md)"
                : "host installed for \(installed.joined(separator: ", "))"
        }
        list.append(DesktopSource(name: "browser", enabled: config.browser, detail: browser))

        var shared: String, sharedFix: String?
        if !config.clipboard {
            shared = "off (clipboard = no in \(file)): copies here are not announced, and others' are not offered here"
        } else if let desktop = clipboard.desktop {
            shared = "sharing the \(desktop.kind) clipboard" + (clipboard.note.map { " (\($0))" } ?? "")
            if clipboard.announced != nil { shared += "; a copy here is announced (formats only)" }
            if clipboard.offered != nil { shared += "; offering another workstation's copy" }
            if clipboard.heldBack != nil { shared += "; another workstation's copy waits for Paste in the menu (this desktop would read it whole at once)" }
        } else {
            shared = "not working: \(clipboard.problem ?? "no display")"
            // A Wayland compositor that lets no program outside it follow the clipboard.
            if clipboard.problem?.contains("no data-control") == true { sharedFix = Self.desktopKind.clipboardFix }
        }
        list.append(DesktopSource(name: "clipboard", enabled: config.clipboard, detail: shared, fix: sharedFix))
        let tray = trayDetail(config)
        list.append(DesktopSource(name: "tray", enabled: config.tray, detail: tray.detail, fix: tray.fix))
        return list
    }
}
