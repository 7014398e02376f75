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
        // Answered on the GLib thread when the server answers: a slow notification server
        // must not hold that thread, which also serves the tray and search.
        return try await withCheckedThrowingContinuation { (c: CheckedContinuation<UInt32, Error>) in
            loop.post { [self] in
                guard let connection else { return c.resume(throwing: GLibError(nil, "not connected to the session bus")) }
                var cStrings = flat.map { strdup($0) } + [nil]
                defer { for p in cStrings { free(p) } }
                let parameters = cStrings.withUnsafeMutableBufferPointer { buf in
                    buf.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buf.count) { actionsPtr in
                        handoff_notify_parameters(appName, replacing ?? 0, icon, summary, body, actionsPtr, desktopEntry, timeoutMilliseconds)
                    }
                }
                DBusNames.call(connection, bus: Self.bus, path: Self.path, interface: Self.bus, method: "Notify", parameters: parameters) { result in
                    switch result {
                    case .success(let values): c.resume(returning: values.first.flatMap { if case .uint32(let u) = $0 { u } else { nil } } ?? 0)
                    case .failure(let e): c.resume(throwing: e)
                    }
                }
            }
        }
    }

    public func close(_ id: UInt32) async {
        await loop.run { [self] in
            guard let connection else { return }
            DBusNames.call(connection, bus: Self.bus, path: Self.path, interface: Self.bus, method: "CloseNotification", [.uint32(id)]) { _ in }
        }
    }
}
