import CGIO

/// The installed apps, through GIO: desktop entries along $XDG_DATA_HOME and
/// $XDG_DATA_DIRS as every desktop finds them (GIO watches the folders and re-reads what
/// changes), the default browser from mimeapps.list, and launching with GIO, which
/// expands the field codes, sets up startup notification and activates
/// `DBusActivatable=true` apps over D-Bus. Call only on the GLib thread.
public enum DesktopApps {
    public static let typesKey = "X-Handoff-ActivityTypes"
    public static let domainsKey = "X-Handoff-Domains"

    /// Every app, with what it declares, and complaints about declarations that do not parse.
    public static func all(userApplications: String) -> (apps: [DesktopHandler], problems: [String]) {
        var apps: [DesktopHandler] = []
        var problems: [String] = []
        let list = g_app_info_get_all()
        defer { handoff_list_free_objects(list) }
        var node = list
        while let n = node {
            if let info = n.pointee.data, handoff_is_desktop_app_info(info) != 0 {
                let app = OpaquePointer(info)
                if let handler = handler(app, userApplications: userApplications, problems: &problems) { apps.append(handler) }
            }
            node = n.pointee.next
        }
        return (apps, problems)
    }

    static func handler(_ app: OpaquePointer, userApplications: String, problems: inout [String]) -> DesktopHandler? {
        guard let idC = g_app_info_get_id(app) else { return nil }
        let id = String(cString: idC)
        let name = g_app_info_get_name(app).map { String(cString: $0) } ?? id
        let icon = g_app_info_get_icon(app).flatMap { takeGString(g_icon_to_string($0)) }
        let file = g_desktop_app_info_get_filename(app).map { String(cString: $0) } ?? ""
        let types = HandlerDeclaration.activityTypes(takeGString(g_desktop_app_info_get_string(app, typesKey)))
        let domains = HandlerDeclaration.domains(takeGString(g_desktop_app_info_get_string(app, domainsKey)))
        if !types.rejected.isEmpty {
            problems.append("\(file): \(typesKey) has entries that are no activity types, ignored: \(types.rejected.prefix(5).joined(separator: ", "))")
        }
        if !domains.rejected.isEmpty {
            problems.append("\(file): \(domainsKey) has entries that are no domain names, ignored: \(domains.rejected.prefix(5).joined(separator: ", "))")
        }
        return DesktopHandler(id: id, name: name, icon: icon, activityTypes: types.valid, domains: domains.valid,
                              isUserEntry: file.hasPrefix(userApplications + "/"),
                              executable: g_app_info_get_executable(app).map { String(cString: $0) })
    }

    /// The user's default handler of https URLs (mimeapps.list), if any.
    public static func defaultBrowser(userApplications: String) -> DesktopHandler? {
        owned(g_app_info_get_default_for_uri_scheme("https"), userApplications: userApplications)
    }

    /// A GAppInfo GIO handed over (or nil) as a handler, released either way.
    private static func owned(_ info: OpaquePointer?, userApplications: String) -> DesktopHandler? {
        guard let info else { return nil }
        defer { handoff_object_unref(UnsafeMutableRawPointer(info)) }
        guard handoff_is_desktop_app_info(UnsafeMutableRawPointer(info)) != 0 else { return nil }
        var ignored: [String] = []
        return handler(info, userApplications: userApplications, problems: &ignored)
    }

    public struct LaunchFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// What became of a launched app's process, filled in on the GLib thread.
    public final class Launched: @unchecked Sendable {
        /// Processes GIO spawned (none for an app activated over D-Bus).
        public var pids: [Int32] = []
        /// Wait statuses of those that have exited.
        public var exits: [Int32: Int32] = [:]
    }

    private final class LaunchBox {
        let launched: Launched
        let context: OpaquePointer
        init(_ launched: Launched, _ context: OpaquePointer) {
            self.launched = launched
            self.context = context
        }
    }

    private final class PidBox {
        let launched: Launched
        let pid: Int32
        init(_ launched: Launched, _ pid: Int32) {
            self.launched = launched
            self.pid = pid
        }
    }

    /// Starts the app with `uris`; `environment` is added to what it inherits. The
    /// processes are reaped on `context` (the GLib thread's), and `Launched` says how they
    /// ended, so that an app that dies at once can be reported as not started.
    public static func launch(_ id: String, uris: [String], environment: [(String, String)], context mainContext: OpaquePointer) throws -> Launched {
        guard let info = g_desktop_app_info_new(id) else {
            throw LaunchFailure(description: "\(id) is not installed (no such desktop entry, or it is hidden)")
        }
        defer { handoff_object_unref(UnsafeMutableRawPointer(info)) }
        let context = g_app_launch_context_new()
        defer { handoff_object_unref(UnsafeMutableRawPointer(context)) }
        for (k, v) in environment { g_app_launch_context_setenv(context, k, v) }
        var list: UnsafeMutablePointer<GList>?
        for uri in uris { list = handoff_list_append_string(list, uri) }
        defer { handoff_list_free_strings(list) }
        let launched = Launched()
        let box = Unmanaged.passRetained(LaunchBox(launched, mainContext))
        defer { box.release() }
        let pidCallback: GDesktopAppLaunchCallback = { _, pid, data in
            guard let data else { return }
            let box = Unmanaged<LaunchBox>.fromOpaque(data).takeUnretainedValue()
            box.launched.pids.append(pid)
            let watch = Unmanaged.passRetained(PidBox(box.launched, pid))
            handoff_watch_child(box.context, pid, { pid, status, data in
                guard let data else { return }
                let w = Unmanaged<PidBox>.fromOpaque(data).takeRetainedValue()
                w.launched.exits[w.pid] = status
            }, watch.toOpaque())
        }
        var error: UnsafeMutablePointer<GError>?
        let flags = GSpawnFlags(rawValue: G_SPAWN_SEARCH_PATH.rawValue | G_SPAWN_DO_NOT_REAP_CHILD.rawValue)
        guard g_desktop_app_info_launch_uris_as_manager(info, list, context, flags, nil, nil, pidCallback, box.toOpaque(), &error) != 0 else {
            throw LaunchFailure(description: "\(id) could not be started: \(GLibError(error, "unknown error"))")
        }
        return launched
    }

    /// Nil if the app is running (or ended well); else how it failed.
    public static func failure(of launched: Launched, _ id: String) -> String? {
        for (_, status) in launched.exits.sorted(by: { $0.key < $1.key }) {
            let signal = status & 0x7f, code = (status >> 8) & 0xff
            if signal != 0 { return "\(id) started but was killed at once (signal \(signal))" }
            if code != 0 { return "\(id) started but exited at once with status \(code)" }
        }
        return nil
    }
}

extension DesktopApps {
    /// The user's default app for a file's content type (guessed from its name and first
    /// bytes, as file managers do), if any.
    public static func defaultApp(forFile path: String, userApplications: String) -> DesktopHandler? {
        guard let type = handoff_guess_type(path) else { return nil }
        defer { g_free(type) }
        return owned(g_app_info_get_default_for_type(type, 0), userApplications: userApplications)
    }

    /// The file's content type, and whether it is a program or launcher (never opened for
    /// another machine: a "document" that is an executable, a .desktop file, a script).
    public static func contentType(ofFile path: String) -> (type: String, isProgram: Bool) {
        guard let t = handoff_guess_type(path) else { return ("application/octet-stream", false) }
        defer { g_free(t) }
        return (String(cString: t), handoff_is_program_type(t) != 0)
    }

    /// Whether the app declares (MimeType=) a type the file is.
    public static func supports(_ appID: String, type: String) -> Bool {
        handoff_app_supports_type(appID, type) != 0
    }

    /// `file:///…` for a local path, escaped as GIO does.
    public static func fileURI(_ path: String) -> String {
        takeGString(g_filename_to_uri(path, nil, nil)) ?? "file://" + path
    }
}
