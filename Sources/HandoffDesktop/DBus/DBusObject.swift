import CGIO

/// One interface of an object the agent exports on the session bus. Calls and property
/// reads arrive on the GLib thread, where `methods` and `properties` run: they answer at
/// once from what they hold, or keep the `DBusInvocation` and answer later from anywhere.
final class DBusObject: @unchecked Sendable {
    typealias Methods = (_ method: String, _ arguments: [DBusValue], _ invocation: DBusInvocation) -> Void
    typealias Properties = (_ name: String) -> DBusValue?

    let path: String
    let interface: String
    private let connection: OpaquePointer
    private let loop: GLibLoop
    private var registration: guint = 0

    private final class Handlers {
        let methods: Methods
        let properties: Properties
        let loop: GLibLoop
        /// GLib let go of it (at unregistering, or, from GLib 2.80 on, when registering failed).
        var released = false
        init(_ m: @escaping Methods, _ p: @escaping Properties, _ loop: GLibLoop) {
            methods = m
            properties = p
            self.loop = loop
        }
    }

    /// Registers the object; GLib thread. `xml` is the introspection of `interface`.
    init(connection: OpaquePointer, loop: GLibLoop, path: String, interface: String, xml: String,
         methods: @escaping Methods, properties: @escaping Properties = { _ in nil }) throws {
        self.connection = connection
        self.loop = loop
        self.path = path
        self.interface = interface
        let handlers = Handlers(methods, properties, loop)
        let box = Unmanaged.passRetained(handlers).toOpaque()
        let call: GDBusInterfaceMethodCallFunc = { _, _, _, _, method, parameters, invocation, data in
            guard let data, let method, let invocation else { return }
            let handlers = Unmanaged<Handlers>.fromOpaque(data).takeUnretainedValue()
            let arguments = parameters.map { DBusValue($0).items } ?? []
            handlers.methods(String(cString: method), arguments, DBusInvocation(invocation, loop: handlers.loop))
        }
        let get: GDBusInterfaceGetPropertyFunc = { _, _, _, _, name, error, data in
            guard let data, let name else { return nil }
            let handlers = Unmanaged<Handlers>.fromOpaque(data).takeUnretainedValue()
            if let value = handlers.properties(String(cString: name)) { return value.gvariant() }
            g_set_error_literal(error, g_dbus_error_quark(), Int32(G_DBUS_ERROR_UNKNOWN_PROPERTY.rawValue), "no such property")
            return nil
        }
        var error: UnsafeMutablePointer<GError>?
        registration = handoff_dbus_export(connection, path, xml, interface, call, get, box, { data in
            guard let data else { return }
            let box = Unmanaged<Handlers>.fromOpaque(data)
            box.takeUnretainedValue().released = true
            box.release()
        }, &error)
        guard registration != 0 else {
            // GLib 2.74 (Debian 12) keeps the box when registering fails, 2.80 and later
            // release it themselves: released once either way.
            if !handlers.released { Unmanaged<Handlers>.fromOpaque(box).release() }
            throw GLibError(error, "could not export \(interface) at \(path)")
        }
    }

    /// Emits one of the interface's signals to every listener. GLib thread.
    func emit(_ signal: String, _ arguments: [DBusValue]) {
        emit(interface: interface, signal, arguments)
    }

    func emit(interface: String, _ signal: String, _ arguments: [DBusValue]) {
        guard registration != 0 else { return }
        var error: UnsafeMutablePointer<GError>?
        g_dbus_connection_emit_signal(connection, nil, path, interface, signal, DBusValue.tuple(arguments).gvariant(), &error)
        if let error { g_error_free(error) }
    }

    /// org.freedesktop.DBus.Properties.PropertiesChanged with the new values. GLib thread.
    func propertiesChanged(_ changed: [DBusEntry]) {
        guard !changed.isEmpty else { return }
        emit(interface: "org.freedesktop.DBus.Properties", "PropertiesChanged",
             [.string(interface), .dictionary(changed), .array("s", [])])
    }

    /// Takes the object off the bus. GLib thread.
    func unregister() {
        guard registration != 0 else { return }
        g_dbus_connection_unregister_object(connection, registration)
        registration = 0
    }
}

/// A method call waiting for its answer. Answered exactly once, from any task: the answer
/// is sent from the GLib thread.
struct DBusInvocation: @unchecked Sendable {
    private let pointer: OpaquePointer
    private let loop: GLibLoop

    init(_ pointer: OpaquePointer, loop: GLibLoop) {
        self.pointer = pointer
        self.loop = loop
    }

    /// The answer's values (an empty list for a method that returns nothing). GLib thread.
    func returnNow(_ values: [DBusValue]) {
        g_dbus_method_invocation_return_value(pointer, DBusValue.tuple(values).gvariant())
    }

    /// A D-Bus error, `org.handoff.Error.NAME`. GLib thread.
    func failNow(_ name: String, _ message: String) {
        g_dbus_method_invocation_return_dbus_error(pointer, "org.handoff.Error." + name, message)
    }

    func reply(_ values: [DBusValue]) async {
        await loop.run { returnNow(values) }
    }

    func fail(_ name: String, _ message: String) async {
        await loop.run { failNow(name, message) }
    }
}

/// Owning a well-known name, and following who owns another. GLib thread.
enum DBusNames {
    /// Asks for `name`; `acquired(true)` once it is ours, `acquired(false)` if another
    /// program holds it (or loses it to us later, then true again). Returns the owner id
    /// for `g_bus_unown_name`.
    static func own(_ connection: OpaquePointer, _ name: String, replace: Bool = false, _ acquired: @escaping (Bool) -> Void) -> guint {
        let box = Unmanaged.passRetained(Callback(acquired)).toOpaque()
        let flags = replace ? G_BUS_NAME_OWNER_FLAGS_REPLACE : G_BUS_NAME_OWNER_FLAGS_NONE
        return g_bus_own_name_on_connection(connection, name, flags, { _, _, data in
            Unmanaged<Callback>.fromOpaque(data!).takeUnretainedValue().body(true)
        }, { _, _, data in
            Unmanaged<Callback>.fromOpaque(data!).takeUnretainedValue().body(false)
        }, box, { data in Unmanaged<Callback>.fromOpaque(data!).release() })
    }

    /// Follows `name`: `changed(owner)` with its unique name when someone takes it
    /// (also at once, if someone holds it now), `changed(nil)` when it goes.
    static func watch(_ connection: OpaquePointer, _ name: String, _ changed: @escaping (String?) -> Void) -> guint {
        let box = Unmanaged.passRetained(WatchCallback(changed)).toOpaque()
        return g_bus_watch_name_on_connection(connection, name, G_BUS_NAME_WATCHER_FLAGS_NONE, { _, _, owner, data in
            Unmanaged<WatchCallback>.fromOpaque(data!).takeUnretainedValue().body(owner.map { String(cString: $0) })
        }, { _, _, data in
            Unmanaged<WatchCallback>.fromOpaque(data!).takeUnretainedValue().body(nil)
        }, box, { data in Unmanaged<WatchCallback>.fromOpaque(data!).release() })
    }

    /// Follows a signal of `sender` (a well-known name: whoever owns it now); `received`
    /// gets its values. Returns the id for `g_dbus_connection_signal_unsubscribe`.
    static func subscribe(_ connection: OpaquePointer, sender: String, interface: String, member: String, path: String,
                          _ received: @escaping ([DBusValue]) -> Void) -> guint {
        let box = Unmanaged.passRetained(SignalCallback(received)).toOpaque()
        return g_dbus_connection_signal_subscribe(connection, sender, interface, member, path, nil, G_DBUS_SIGNAL_FLAGS_NONE, { _, _, _, _, _, parameters, data in
            guard let parameters else { return }
            Unmanaged<SignalCallback>.fromOpaque(data!).takeUnretainedValue().body(DBusValue(parameters).items)
        }, box, { data in Unmanaged<SignalCallback>.fromOpaque(data!).release() })
    }

    /// Calls a method without blocking the GLib thread; `done` gets the answer's values or
    /// the error's text, on the GLib thread.
    static func call(_ connection: OpaquePointer, bus: String, path: String, interface: String, method: String, _ arguments: [DBusValue],
                     timeoutMilliseconds: Int32 = 5000, done: @escaping (Result<[DBusValue], GLibError>) -> Void) {
        call(connection, bus: bus, path: path, interface: interface, method: method, parameters: DBusValue.tuple(arguments).gvariant(),
             timeoutMilliseconds: timeoutMilliseconds, done: done)
    }

    /// The same with the parameters made already (a floating GVariant, which the call takes).
    static func call(_ connection: OpaquePointer, bus: String, path: String, interface: String, method: String, parameters: OpaquePointer?,
                     timeoutMilliseconds: Int32 = 5000, done: @escaping (Result<[DBusValue], GLibError>) -> Void) {
        let box = Unmanaged.passRetained(CallCallback(done)).toOpaque()
        handoff_dbus_call(connection, bus, path, interface, method, parameters, timeoutMilliseconds, { source, result, data in
            let callback = Unmanaged<CallCallback>.fromOpaque(data!).takeRetainedValue()
            var error: UnsafeMutablePointer<GError>?
            if let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error) {
                let values = DBusValue(reply).items
                g_variant_unref(reply)
                callback.body(.success(values))
            } else {
                callback.body(.failure(GLibError(error, "\(callback) failed")))
            }
        }, box)
    }

    private final class Callback {
        let body: (Bool) -> Void
        init(_ body: @escaping (Bool) -> Void) { self.body = body }
    }

    private final class WatchCallback {
        let body: (String?) -> Void
        init(_ body: @escaping (String?) -> Void) { self.body = body }
    }

    private final class SignalCallback {
        let body: ([DBusValue]) -> Void
        init(_ body: @escaping ([DBusValue]) -> Void) { self.body = body }
    }

    private final class CallCallback {
        let body: (Result<[DBusValue], GLibError>) -> Void
        init(_ body: @escaping (Result<[DBusValue], GLibError>) -> Void) { self.body = body }
    }
}
