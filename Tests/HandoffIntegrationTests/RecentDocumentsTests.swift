import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

/// The document opened last (as GTK records it in recently-used.xbel, here through
/// Gtk.RecentManager from python3-gi) becomes the current
/// activity on a, and continuing on b opens b's copy in the app the list recorded. Root only.
extension WorkstationTests {
// In CI it runs regardless, and fails if scripts/install-deps did not install them.
@Suite(.enabled(if: FileManager.default.fileExists(atPath: TestEnvironment.multiarchLibrary + "/girepository-1.0/Gtk-3.0.typelib")
                    || ProcessInfo.processInfo.environment["CI"] == "true",
                "needs python3-gi and gir1.2-gtk-3.0"))
struct RecentDocumentsTests {
    @Test func documentOpenedLastFollowsTheUser() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            let sync = ["a": net.directory + "/a/Docs", "b": net.directory + "/b/Elsewhere/Docs"]
            for (host, path) in sync {
                try FileManager.default.createDirectory(atPath: net.directory + "/\(host)/state/syncthing", withIntermediateDirectories: true)
                try "<configuration><folder id=\"docs-1\" path=\"\(path)\"></folder></configuration>"
                    .write(toFile: net.directory + "/\(host)/state/syncthing/config.xml", atomically: true, encoding: .utf8)
                try FileManager.default.createDirectory(atPath: path + "/plans", withIntermediateDirectories: true)
                try "the plan\n".write(toFile: path + "/plans/q4.txt", atomically: true, encoding: .utf8)
            }
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let a = try DesktopSession(net, host: "a"), b = try DesktopSession(net, host: "b")
            defer { a.stop(); b.stop() }
            // On b: the recorded app, and another that is the default for text/plain.
            try b.addEntry("org.example.Editor.desktop", name: "Editor", lines: ["MimeType=text/plain;"], recordAs: "editor")
            try b.addEntry("org.example.Viewer.desktop", name: "Viewer", lines: ["MimeType=text/plain;"], recordAs: "viewer")
            try "[Default Applications]\ntext/plain=org.example.Viewer.desktop\n".write(toFile: b.configHome + "/mimeapps.list", atomically: true, encoding: .utf8)
            for d in [a, b] {
                try await d.startBus()
                try await d.startAgent(["--no-notifications", "--no-media"], environment: ["XDG_DATA_DIRS": d.root + "/system:/usr/share"])
            }
            // An app on a opens the file, and GLib records it (as GTK apps do).
            let record = """
                import os, sys
                import gi
                gi.require_version("Gtk", "3.0")
                from gi.repository import Gtk, GLib
                data = Gtk.RecentData()
                data.mime_type, data.app_name, data.app_exec = "text/plain", "org.example.Editor", "editor %u"
                assert Gtk.RecentManager.get_default().add_full(GLib.filename_to_uri(sys.argv[1], None), data)
                # GTK writes the file from its main loop, a moment later: run the loop (it
                # blocks until GTK's write timer fires) until the list holds the document.
                xbel = os.path.join(GLib.get_user_data_dir(), "recently-used.xbel")
                def written():
                    try:
                        with open(xbel) as f: return os.path.basename(sys.argv[1]) in f.read()
                    except OSError:
                        return False
                while not written():
                    GLib.MainContext.default().iteration(True)
                """
            // Bounded: a loop that never sees the file written ends with timeout's status.
            let wrote = try await a.run(["timeout", "20", "/usr/bin/python3", "-c", record, sync["a"]! + "/plans/q4.txt"])
            #expect(wrote.status == 0, "\(wrote)")
            try await eventually(15, "the recent document to be a's current activity") {
                try await net.ctl("a", "current").stdout.contains("handoff.open-document")
            }
            try await eventually(10, "the offer at b") { try await net.ctl("b", "list").stdout.contains("handoff.open-document") }
            let r = try await net.ctl("b", "continue")
            #expect(r.status == 0 && r.stdout.contains("in Editor (org.example.Editor.desktop)"), "\(r)\n\(b.log)")
            let opened = try await b.waitForRecord("editor")
            let uri = (opened["argv"] as? [String])?.first ?? ""
            #expect(URL(string: uri)?.path == sync["b"]! + "/plans/q4.txt", "\(opened)")
            #expect(try b.record("viewer") == nil, "the recorded app wins over the type's default")
        }
    }
}
}
