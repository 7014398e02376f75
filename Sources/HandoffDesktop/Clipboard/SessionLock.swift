import CGIO
#if canImport(Glibc)
import Glibc
#endif

/// Whether the user's graphical session is locked, as logind knows it (desktops tell it
/// with SetLockedHint): the user's `Display` session's `LockedHint`, on the system bus.
/// Asked at each copy, so a copy made behind a locked screen is never announced.
enum SessionLock {
    /// Nil when logind cannot say (no system bus, no logind, no graphical session).
    static func isLocked(loop: GLibLoop) async -> Bool? {
        await loop.run { () -> Bool? in
            guard let bus = g_bus_get_sync(G_BUS_TYPE_SYSTEM, nil, nil) else { return nil }
            defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
            func call(_ path: String, _ interface: String, _ method: String, _ parameters: OpaquePointer?) -> OpaquePointer? {
                g_dbus_connection_call_sync(bus, "org.freedesktop.login1", path, interface, method, parameters, nil,
                                            G_DBUS_CALL_FLAGS_NONE, 2000, nil, nil)
            }
            guard let user = call("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "GetUser", handoff_params_uint32(getuid())) else { return nil }
            let userPath = handoff_variant_object_path(user)
            g_variant_unref(user)
            guard let userPath else { return nil }
            defer { g_free(userPath) }
            guard let display = call(String(cString: userPath), "org.freedesktop.DBus.Properties", "Get",
                                     handoff_params_property("org.freedesktop.login1.User", "Display")) else { return nil }
            let sessionPath = handoff_variant_object_path(display)
            g_variant_unref(display)
            guard let sessionPath else { return nil }
            defer { g_free(sessionPath) }
            // "/": the user has no graphical session.
            guard String(cString: sessionPath) != "/",
                  let hint = call(String(cString: sessionPath), "org.freedesktop.DBus.Properties", "Get",
                                  handoff_params_property("org.freedesktop.login1.Session", "LockedHint")) else { return nil }
            defer { g_variant_unref(hint) }
            var locked: gboolean = 0
            guard handoff_variant_boxed_boolean(hint, &locked) != 0 else { return nil }
            return locked != 0
        }
    }
}
