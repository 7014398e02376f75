import CGIO

/// Freedesktop notifications (org.freedesktop.Notifications) on the session bus through
/// GDBus: show, replace, close, and what the user did with them (`events`).
public final class DesktopNotifications: @unchecked Sendable {
    public enum Event: Sendable, Equatable {
        case actionInvoked(id: UInt32, action: String)
        case closed(id: UInt32)
    }

    public let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let loop: GLibLoop
    /// Touched only on the GLib thread.
    private var connection: OpaquePointer?
    private var box: Unmanaged<Box>?

    private final class Box {
        let continuation: AsyncStream<Event>.Continuation
        init(_ c: AsyncStream<Event>.Continuation) { continuation = c }
    }

    static let bus = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"

    /// Connects to the session bus and listens for the server's signals.
    public init(loop: GLibLoop) async throws {
        self.loop = loop
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(64))
        try await loop.run { [self] in try self.connect() }
    }

    private func connect() throws {
        var error: UnsafeMutablePointer<GError>?
        guard let c = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            throw GLibError(error, "no session bus")
        }
        connection = c
        let box = Unmanaged.passRetained(Box(continuation))
        self.box = box
        let callback: GDBusSignalCallback = { _, _, _, _, signal, parameters, data in
            guard let data, let signal else { return }
            let box = Unmanaged<Box>.fromOpaque(data).takeUnretainedValue()
            var id: guint32 = 0
            switch String(cString: signal) {
            case "ActionInvoked":
                var key: UnsafePointer<gchar>?
                if handoff_variant_uint32_string(parameters, &id, &key) != 0, let key {
                    box.continuation.yield(.actionInvoked(id: id, action: String(cString: key)))
                }
            case "NotificationClosed":
                var reason: guint32 = 0
                if handoff_variant_uint32_pair(parameters, &id, &reason) != 0 { box.continuation.yield(.closed(id: id)) }
            default:
                break
            }
        }
        for signal in ["ActionInvoked", "NotificationClosed"] {
            // Only the notification server's signals: no other client can "click" for the user.
            g_dbus_connection_signal_subscribe(c, Self.bus, Self.bus, signal, Self.path, nil, G_DBUS_SIGNAL_FLAGS_NONE, callback, box.toOpaque(), nil)
        }
    }

    /// Shows (or replaces) a notification; returns its id. `actions` are (key, label)
    /// pairs; "default" is what a click on the notification does.
    public func notify(appName: String, summary: String, body: String, icon: String?, desktopEntry: String?,
                       actions: [(String, String)], replacing: UInt32?, timeoutMilliseconds: Int32 = -1) async throws -> UInt32 {
        let flat = actions.flatMap { [$0.0, $0.1] }
        // Servers may render markup in the body: text from other machines is escaped.
        let body = body.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
        return try await loop.run { [self] () throws -> UInt32 in
            guard let connection else { throw GLibError(nil, "not connected to the session bus") }
            var cStrings = flat.map { strdup($0) } + [nil]
            defer { for p in cStrings { free(p) } }
            let parameters = cStrings.withUnsafeMutableBufferPointer { buf in
                buf.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buf.count) { actionsPtr in
                    handoff_notify_parameters(appName, replacing ?? 0, icon, summary, body, actionsPtr, desktopEntry, timeoutMilliseconds)
                }
            }
            var error: UnsafeMutablePointer<GError>?
            guard let reply = g_dbus_connection_call_sync(connection, Self.bus, Self.path, Self.bus, "Notify", parameters, nil,
                                                          G_DBUS_CALL_FLAGS_NONE, 5000, nil, &error) else {
                throw GLibError(error, "Notify failed")
            }
            defer { g_variant_unref(reply) }
            return handoff_variant_first_uint32(reply)
        }
    }

    public func close(_ id: UInt32) async {
        await loop.run { [self] in
            guard let connection else { return }
            var error: UnsafeMutablePointer<GError>?
            if let reply = g_dbus_connection_call_sync(connection, Self.bus, Self.path, Self.bus, "CloseNotification",
                                                       handoff_close_parameters(id), nil, G_DBUS_CALL_FLAGS_NONE, 5000, nil, &error) {
                g_variant_unref(reply)
            } else if let error {
                g_error_free(error)
            }
        }
    }
}
