import CGIO
import FoundationEssentials

/// Recent documents as GTK and KDE apps record them: `$XDG_DATA_HOME/recently-used.xbel`,
/// read with GLib's GBookmarkFile. The file is replaced by rename, so its folder is
/// watched (inotify through GFileMonitor, on the GLib thread); `changes` yields after each
/// change, and `mostRecent` says which document inside the given folders was opened last.
public final class RecentDocuments: @unchecked Sendable {
    public struct Entry: Sendable, Equatable {
        public var path: String
        public var mimeType: String?
        /// The application the bookmark names (e.g. "gedit", "org.gnome.TextEditor").
        public var application: String?
        /// Seconds since 1970: last modified or visited.
        public var when: Int64
    }

    public let changes: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    public let file: String
    private let loop: GLibLoop
    /// The folder's GFileMonitor; GLib thread only.
    private nonisolated(unsafe) var monitor: OpaquePointer?

    private final class Box: @unchecked Sendable {
        let continuation: AsyncStream<Void>.Continuation
        init(_ c: AsyncStream<Void>.Continuation) { continuation = c }
    }

    public init(loop: GLibLoop, dataHome: String) async {
        self.loop = loop
        file = dataHome + "/recently-used.xbel"
        (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        try? FileManager.default.createDirectory(atPath: dataHome, withIntermediateDirectories: true)
        let box = Unmanaged.passRetained(Box(continuation))
        await loop.run { [self, dataHome] in
            let changed: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, GFileMonitorEvent, gpointer?) -> Void = { _, file, _, _, data in
                guard let data, let file, let name = takeGString(g_file_get_basename(file)), name.hasPrefix("recently-used.xbel") else { return }
                Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().continuation.yield()
            }
            monitor = OpaquePointer(handoff_watch_directory(dataHome, unsafeBitCast(changed, to: GCallback.self), box.toOpaque()))
        }
    }

    /// Stops watching (the source was turned off): `changes` ends.
    public func stop() async {
        await loop.run { [self] in
            if let monitor {
                g_file_monitor_cancel(UnsafeMutablePointer(monitor))
                g_object_unref(UnsafeMutableRawPointer(monitor))
            }
            monitor = nil
            // The callback's box is not released: an event GLib queued before the cancel
            // may still run. It costs a few bytes per time the source is turned off.
        }
        continuation.finish()
    }

    /// The document opened last whose resolved path is inside one of `folders`.
    public static func mostRecent(in file: String, folders: [String]) -> Entry? {
        let prefixes = folders.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        var cStrings = prefixes.map { strdup($0) } + [nil]
        defer { for p in cStrings { free(p) } }
        var uri: UnsafeMutablePointer<CChar>?, mime: UnsafeMutablePointer<CChar>?, app: UnsafeMutablePointer<CChar>?
        var when: gint64 = 0
        let found = cStrings.withUnsafeMutableBufferPointer { buf in
            buf.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buf.count) {
                handoff_recent_document(file, $0, &uri, &mime, &app, &when)
            }
        }
        let uriText = takeGString(uri), mimeText = takeGString(mime), appText = takeGString(app)
        guard found != 0, let u = uriText, let path = takeGString(g_filename_from_uri(u, nil, nil)) else { return nil }
        return Entry(path: path, mimeType: mimeText, application: appText, when: Int64(when))
    }
}
