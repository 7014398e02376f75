import FoundationEssentials
import HandoffCore

extension WellKnownActivityType {
    /// "The user opened this document": it carries the document (`handoff.document`), its
    /// `mimeType` and the `application` the recent-files list names.
    public static let openDocument = "handoff.open-document"
}

extension SessionAgent {
    /// How recent the last document must be to be offered when the agent starts.
    static let recentAtStart: Int64 = 600

    func startRecentDocuments() async {
        let recent = await RecentDocuments(loop: loop, dataHome: settings.dataHome)
        self.recent = recent
        await recentChanged(atStart: true)
        Task { [weak self] in
            for await _ in recent.changes { await self?.recentChanged(atStart: false) }
        }
    }

    /// The list changed: offer the document opened last, if it is in a synced folder and
    /// not the one offered already.
    func recentChanged(atStart: Bool) async {
        guard let recent, let session = sessionToken else { return }
        guard let folders = try? await client.syncedRootPaths(), !folders.isEmpty else { return }
        let file = recent.file
        guard let entry = await loop.run({ RecentDocuments.mostRecent(in: file, folders: folders) }) else { return }
        if atStart, Int64(Date().timeIntervalSince1970) - entry.when > Self.recentAtStart { return }
        guard entry.path != sources.recentOffered?.path || entry.when > (sources.recentOffered?.when ?? 0) else { return }
        guard entry.path != sources.recentOffered?.path else {
            sources.recentOffered = entry  // reopened: the activity stands
            return
        }
        sources.recentOffered = entry
        guard sources.foreignCurrent == nil else { return }  // an app's own activity stays
        var draft = ActivityDraft(activityType: WellKnownActivityType.openDocument)
        draft.title = String(entry.path.split(separator: "/").last ?? "document")
        if let m = entry.mimeType { draft.userInfo["mimeType"] = .string(m) }
        if let a = entry.application { draft.userInfo["application"] = .string(a) }
        do {
            if let old = sources.recentID { _ = try? await client.invalidate(old) }
            let record = try await client.becomeCurrent(draft, session: session, document: entry.path)
            sources.recentID = record.activity.id.rawValue
            sources.remember(record.activity.id.rawValue)
            logger.info("recent document: offered", metadata: ["path": "\(entry.path)"])
        } catch {
            logger.warning("recent documents: could not offer \(entry.path)", metadata: ["error": "\(error)"])
        }
    }

    /// The app the recent-files list recorded for a document, if it is installed here:
    /// by desktop id, executable or name.
    static func recordedApp(_ name: String, among apps: [DesktopHandler]) -> DesktopHandler? {
        let n = name.lowercased()
        return apps.first { $0.id.lowercased() == n + ".desktop" || $0.id.lowercased() == n }
            ?? apps.first { $0.executable.map { URL(fileURLWithPath: $0).lastPathComponent.lowercased() == n } ?? false }
            ?? apps.first { $0.name.lowercased() == n }
    }
}
