import CGIO
#if canImport(Glibc)
import Glibc
#endif

/// logind's delay lock on the system bus (org.freedesktop.login1.Manager.Inhibit("sleep",
/// …, "delay")): while the agent holds its file descriptor, logind waits (at most
/// InhibitDelayMaxSec) before the machine sleeps, after announcing it with
/// `PrepareForSleep(true)`; `PrepareForSleep(false)` follows the wake-up. The lock is
/// given back by closing the descriptor, and taken again after waking.
final class SleepInhibitor: @unchecked Sendable {
    /// `PrepareForSleep`'s argument: true before sleep, false after it.
    let events: AsyncStream<Bool>
    private let continuation: AsyncStream<Bool>.Continuation
    private let loop: GLibLoop
    /// Touched only on the GLib thread.
    private var connection: OpaquePointer?
    private var lock: Int32 = -1
    private var box: Unmanaged<Box>?

    private final class Box {
        let continuation: AsyncStream<Bool>.Continuation
        init(_ c: AsyncStream<Bool>.Continuation) { continuation = c }
    }

    static let bus = "org.freedesktop.login1"
    static let path = "/org/freedesktop/login1"
    static let interface = "org.freedesktop.login1.Manager"

    /// Connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS, else the usual socket) and
    /// listens for logind's `PrepareForSleep`.
    init(loop: GLibLoop) async throws {
        self.loop = loop
        (events, continuation) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(8))
        try await loop.run { [self] in try self.connect() }
    }

    private func connect() throws {
        var error: UnsafeMutablePointer<GError>?
        guard let c = g_bus_get_sync(G_BUS_TYPE_SYSTEM, nil, &error) else { throw GLibError(error, "no system bus") }
        connection = c
        let box = Unmanaged.passRetained(Box(continuation))
        self.box = box
        let callback: GDBusSignalCallback = { _, _, _, _, _, parameters, data in
            guard let data else { return }
            var sleeping: gboolean = 0
            guard handoff_variant_boolean_tuple(parameters, &sleeping) != 0 else { return }
            Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().continuation.yield(sleeping != 0)
        }
        // Only logind's own signal: no other client can put this workstation "to sleep".
        g_dbus_connection_signal_subscribe(c, Self.bus, Self.interface, "PrepareForSleep", Self.path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
                                           callback, box.toOpaque(), nil)
    }

    /// Takes the delay lock (nothing if held already). Throws when logind is not there or refuses.
    func take() async throws {
        try await loop.run { [self] in
            guard lock < 0 else { return }
            guard let connection else { throw GLibError(nil, "not connected to the system bus") }
            var error: UnsafeMutablePointer<GError>?
            var fds: UnsafeMutablePointer<GUnixFDList>?
            let parameters = handoff_inhibit_parameters("sleep", "handoff", "hand the current activity to your other workstations", "delay")
            guard let reply = g_dbus_connection_call_with_unix_fd_list_sync(
                connection, Self.bus, Self.path, Self.interface, "Inhibit", parameters, nil, G_DBUS_CALL_FLAGS_NONE, 5000,
                nil, &fds, nil, &error) else {
                let refusal = GLibError(error, "logind refused the delay lock")
                // logind asks polkit; without polkitd (a minimal or headless install) it
                // refuses every user but root, so say what would let it agree.
                if refusal.description.contains("org.freedesktop.DBus.Error.AccessDenied") {
                    throw SleepLockRefused()
                }
                throw refusal
            }
            defer {
                g_variant_unref(reply)
                if let fds { g_object_unref(UnsafeMutableRawPointer(fds)) }
            }
            let index = handoff_variant_handle(reply)
            guard index >= 0, let fds else { throw GLibError(nil, "logind's answer to Inhibit carries no file descriptor") }
            let fd = g_unix_fd_list_get(fds, index, &error)
            guard fd >= 0 else { throw GLibError(error, "could not take logind's file descriptor") }
            lock = fd
        }
    }

    /// Gives the lock back: logind may let the machine sleep now.
    func release() async {
        await loop.run { [self] in
            guard lock >= 0 else { return }
            close(lock)
            lock = -1
        }
    }
}

/// logind said no to the delay lock: polkit is missing or its rules deny
/// org.freedesktop.login1.inhibit-delay-sleep (Debian allows it to every user).
struct SleepLockRefused: Error, CustomStringConvertible {
    var description: String {
        "logind refused the delay lock: polkit is not installed or does not allow org.freedesktop.login1.inhibit-delay-sleep (install polkitd)"
    }
}
