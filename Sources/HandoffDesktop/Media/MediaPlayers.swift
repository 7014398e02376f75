import CGIO

/// MPRIS players on the session bus, through GDBus: which there are, what each plays and
/// where, and their events (a player appearing or leaving, its properties changing, a
/// seek). Nothing is polled: idle players cost nothing. Calls run on the GLib thread.
public final class MediaPlayers: @unchecked Sendable {
    public struct State: Sendable, Equatable {
        public var status: String        // Playing, Paused, Stopped
        public var url: String?
        public var title: String?
        public var artist: String?
        public var trackID: String?
        /// µs; nil when the player does not say.
        public var length: Int64?
        public var position: Int64?
        public var rate: Double
        public var canSeek: Bool
    }

    public enum Event: Sendable, Equatable {
        /// A player appeared, or its properties changed: read its state again.
        case changed(name: String)
        case gone(name: String)
        case seeked(name: String, position: Int64)
    }

    static let prefix = "org.mpris.MediaPlayer2."
    static let path = "/org/mpris/MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"

    public let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let loop: GLibLoop
    private var connection: OpaquePointer?
    /// Unique name (":1.42") -> well-known name, for signals that come from the owner.
    private var owners: [String: String] = [:]
    private var subscriptions: [guint] = []
    /// Handed to GDBus with the subscriptions; kept for the object's life (it is made once).
    private var followBox: UnsafeMutableRawPointer?

    private final class Box {
        weak var players: MediaPlayers?
        init(_ p: MediaPlayers) { players = p }
    }

    public init(loop: GLibLoop) async throws {
        self.loop = loop
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(256))
        try await loop.run { [self] in try self.connect() }
    }

    private func connect() throws {
        var error: UnsafeMutablePointer<GError>?
        guard let c = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else { throw GLibError(error, "no session bus") }
        connection = c
    }

    /// Whether players' signals are followed (the media source is on).
    public var isFollowing: Bool { !subscriptions.isEmpty }

    /// Starts following players' arrivals, departures, changes and seeks. GLib thread.
    public func follow() {
        guard let c = connection, subscriptions.isEmpty else { return }
        let box = followBox ?? Unmanaged.passRetained(Box(self)).toOpaque()
        followBox = box
        let callback: GDBusSignalCallback = { _, sender, _, _, signal, parameters, data in
            guard let data, let signal else { return }
            Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().players?.signal(String(cString: signal),
                                                                                 sender: sender.map { String(cString: $0) }, parameters)
        }
        subscriptions = [
            g_dbus_connection_signal_subscribe(c, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged", "/org/freedesktop/DBus",
                                               nil, G_DBUS_SIGNAL_FLAGS_NONE, callback, box, nil),
            g_dbus_connection_signal_subscribe(c, nil, "org.freedesktop.DBus.Properties", "PropertiesChanged", Self.path,
                                               nil, G_DBUS_SIGNAL_FLAGS_NONE, callback, box, nil),
            g_dbus_connection_signal_subscribe(c, nil, Self.playerInterface, "Seeked", Self.path,
                                               nil, G_DBUS_SIGNAL_FLAGS_NONE, callback, box, nil),
        ]
        owners = [:]
        for name in listPlayers() { rememberOwner(of: name) }
    }

    /// Stops following: no signal from a player reaches the agent any more. GLib thread.
    public func unfollow() {
        guard let c = connection else { return }
        for id in subscriptions { g_dbus_connection_signal_unsubscribe(c, id) }
        subscriptions = []
        owners = [:]
    }

    /// On the GLib thread.
    private func signal(_ name: String, sender: String?, _ parameters: OpaquePointer?) {
        switch name {
        case "NameOwnerChanged":
            var n: UnsafePointer<CChar>?, old: UnsafePointer<CChar>?, new: UnsafePointer<CChar>?
            guard handoff_variant_three_strings(parameters, &n, &old, &new) != 0, let n else { return }
            let busName = String(cString: n)
            guard busName.hasPrefix(Self.prefix) else { return }
            let newOwner = new.map { String(cString: $0) } ?? ""
            owners = owners.filter { $0.value != busName }
            if newOwner.isEmpty {
                continuation.yield(.gone(name: busName))
            } else {
                owners[newOwner] = busName
                continuation.yield(.changed(name: busName))
            }
        case "PropertiesChanged":
            guard let sender, let busName = owners[sender] else { return }
            guard let iface = handoff_variant_first_string(parameters), String(cString: iface) == Self.playerInterface else { return }
            continuation.yield(.changed(name: busName))
        case "Seeked":
            guard let sender, let busName = owners[sender] else { return }
            var position: gint64 = 0
            if handoff_variant_first_int64(parameters, &position) != 0 { continuation.yield(.seeked(name: busName, position: Int64(position))) }
        default:
            break
        }
    }

    private func rememberOwner(of busName: String) {
        guard let reply = call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                               handoff_params_string(busName)) else { return }
        defer { g_variant_unref(reply) }
        if let owner = handoff_variant_first_string(reply) { owners[String(cString: owner)] = busName }
    }

    private func call(_ bus: String, _ path: String, _ iface: String, _ method: String, _ params: OpaquePointer?, timeout: Int32 = 2000) -> OpaquePointer? {
        guard let connection else { return nil }
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(connection, bus, path, iface, method, params, nil, G_DBUS_CALL_FLAGS_NONE, timeout, nil, &error)
        if let error { g_error_free(error) }
        return reply
    }

    // MARK: - Queries and commands (on the GLib thread: call through `loop.run`)

    public func listPlayers() -> [String] {
        guard let reply = call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListNames", nil) else { return [] }
        defer { g_variant_unref(reply) }
        guard let names = handoff_variant_names(reply) else { return [] }
        defer { g_strfreev(names) }
        var out: [String] = []
        var i = 0
        while let n = names[i] {
            let s = String(cString: n)
            if s.hasPrefix(Self.prefix) { out.append(s) }
            i += 1
        }
        return out.sorted()
    }

    public func state(of name: String) -> State? {
        guard let reply = call(name, Self.path, "org.freedesktop.DBus.Properties", "GetAll", handoff_params_getall(Self.playerInterface)) else { return nil }
        defer { g_variant_unref(reply) }
        var s = handoff_mpris_state()
        handoff_mpris_parse(reply, &s)
        defer { handoff_mpris_state_clear(&s) }
        func str(_ p: UnsafeMutablePointer<CChar>?) -> String? { p.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        // Whatever a program on the bus claims, the numbers stay sane: no NaN, no overflow.
        let rate = s.rate.isFinite && s.rate >= 0 && s.rate <= 100 ? s.rate : 1
        let ceiling: Int64 = 1 << 50  // µs: 35 years
        return State(status: str(s.status) ?? "Stopped", url: str(s.url), title: str(s.title), artist: str(s.artist), trackID: str(s.trackid),
                     length: s.length >= 0 ? min(Int64(s.length), ceiling) : nil, position: s.position >= 0 ? min(Int64(s.position), ceiling) : nil,
                     rate: rate, canSeek: s.can_seek != 0)
    }

    /// The player's desktop entry (without `.desktop`) and whether it takes `scheme` URIs.
    public func root(of name: String, scheme: String) -> (desktopEntry: String?, supports: Bool) {
        guard let reply = call(name, Self.path, "org.freedesktop.DBus.Properties", "GetAll", handoff_params_getall("org.mpris.MediaPlayer2")) else {
            return (nil, false)
        }
        defer { g_variant_unref(reply) }
        var supports: gboolean = 0
        let entry = takeGString(handoff_mpris_root(reply, scheme, &supports))
        return (entry, supports != 0)
    }

    @discardableResult
    public func command(_ name: String, _ method: String, _ params: OpaquePointer? = nil) -> Bool {
        guard let reply = call(name, Self.path, Self.playerInterface, method, params) else { return false }
        g_variant_unref(reply)
        return true
    }

    public func openURI(_ name: String, _ uri: String) -> Bool { command(name, "OpenUri", handoff_params_string(uri)) }
    public func setPosition(_ name: String, trackID: String, _ position: Int64) -> Bool {
        guard let params = handoff_params_set_position(trackID, gint64(position)) else { return false }
        return command(name, "SetPosition", params)
    }
}
