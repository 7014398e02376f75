import Foundation
import HandoffCore
@testable import HandoffDaemon
import Testing

/// This side's copy of a continued terminal's synced folder: opened locally only when it is
/// a directory really inside the copy; where the origin's directory lies among synced folders.
struct TerminalPreferencesHereTests {
    @Test func onlyADirectoryReallyInsideTheCopyOpensLocally() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("tph-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        let copy = base + "/copy", outside = base + "/outside"
        for d in [copy + "/notes/x y", outside] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(atPath: copy + "/escape", withDestinationPath: outside)
        try "f".write(toFile: copy + "/file", atomically: true, encoding: .utf8)
        let roots = [(name: "proj", path: copy)]
        func local(_ path: String, syncedLocal: Bool = true, tmux: String? = nil) -> String? {
            let session = TerminalSession(host: "desk", directory: "/srv/proj", tmuxSession: tmux,
                                          syncedFolder: SyncedFolderPath(root: SyncedRootID(kind: "configured", id: "proj"), path: path))
            return TerminalPreferencesHere.preferences(for: session, transport: .ssh, syncedLocal: syncedLocal, configuredRoots: roots).localDirectory
        }
        let real = SyncedRoots.resolved(copy)
        #expect(local("notes/x y") == real + "/notes/x y")
        #expect(local("") == real)
        #expect(local("escape") == nil, "a link out of the folder is not followed")
        #expect(local("file") == nil && local("missing") == nil)
        #expect(local("notes/x y", syncedLocal: false) == nil)
        #expect(local("notes/x y", tmux: "work") == nil, "in tmux it attaches where it runs")
        let other = TerminalSession(host: "desk", directory: "/srv", syncedFolder: SyncedFolderPath(root: SyncedRootID(kind: "configured", id: "elsewhere"), path: ""))
        #expect(TerminalPreferencesHere.preferences(for: other, transport: .ssh, syncedLocal: true, configuredRoots: roots).localDirectory == nil)

        // The origin's side: where a directory lies among the synced folders.
        #expect(TerminalPreferencesHere.syncedFolder(of: copy + "/notes/x y", configuredRoots: roots)
                == SyncedFolderPath(root: SyncedRootID(kind: "configured", id: "proj"), path: "notes/x y"))
        #expect(TerminalPreferencesHere.syncedFolder(of: copy, configuredRoots: roots)?.path == "")
        #expect(TerminalPreferencesHere.syncedFolder(of: outside, configuredRoots: roots) == nil)
    }

    @Test func moshOnlyWhenPreferredAndOnThePath() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tph-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "#!/bin/sh\n".write(toFile: dir + "/mosh", atomically: true, encoding: .utf8)
        chmod(dir + "/mosh", 0o755)
        let session = TerminalSession(host: "desk", directory: "/srv")
        #expect(TerminalPreferencesHere.preferences(for: session, transport: .mosh, syncedLocal: true, configuredRoots: [], path: dir).moshInstalled)
        #expect(!TerminalPreferencesHere.preferences(for: session, transport: .mosh, syncedLocal: true, configuredRoots: [], path: "/nonexistent").moshInstalled)
        #expect(!TerminalPreferencesHere.preferences(for: session, transport: .ssh, syncedLocal: true, configuredRoots: [], path: dir).moshInstalled)
    }
}
