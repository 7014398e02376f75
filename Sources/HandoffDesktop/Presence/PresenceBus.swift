import CGIO
import HandoffCore

/// The session agent on the session bus (Docs/Desktop.md, "Presence"): it owns
/// `org.handoff.Session`, serves the presence (`org.handoff.Presence1`), GNOME Shell's
/// and KRunner's search, and, unless the tray is turned off, the tray icon and its menu.
/// What the bus asks that needs handoffd reaches the agent as a `Command`; everything
/// else is answered here from the last presence shown. GLib thread, but for `commands`.
public final class PresenceBus: @unchecked Sendable {
    public static let busName = "org.handoff.Session"

    enum Command: Sendable {
        /// An entry of the tray's menu was clicked (its key).
        case menuClicked(String)
        /// A left click on the icon: continue the newest.
        case activate
        /// The menu opens: a moment to bring what it says up to date.
        case menuOpened
        /// A method of `org.handoff.Presence1`.
        case presence(method: String, arguments: [DBusValue], DBusInvocation)
        case search(SearchProviders.Query, DBusInvocation)
        case activateResult(ShellSearch.Result)
        /// Whether a panel shows the tray icon.
        case trayHost(StatusNotifierItem.HostState)
        /// Whether GNOME Shell runs here, and whether handoff's extension in it shows the
        /// presence (it owns `extensionBusName` while enabled).
        case gnomeShell(Bool)
        case shellExtension(Bool)
    }

    /// The name handoff's GNOME Shell extension owns while it shows the presence.
    static let extensionBusName = "org.handoff.Shell"

    let commands: AsyncStream<Command>
    private let continuation: AsyncStream<Command>.Continuation
    private let loop: GLibLoop
    private var connection: OpaquePointer?
    private var owner: guint = 0
    private var watches: [guint] = []
    private var presence: PresenceInterface?
    private var search: SearchProviders?
    private var item: StatusNotifierItem?
    private var menu: DBusMenu?
    /// What was shown last, for a tray started later, and which publication it was: the
    /// agent's publications may arrive out of order, and an older one is dropped.
    private var lastLook = StatusNotifierItem.Look()
    private var layout = MenuLayout()
    private var shown: UInt64 = 0

    init(loop: GLibLoop) {
        self.loop = loop
        (commands, continuation) = AsyncStream.makeStream(of: Command.self, bufferingPolicy: .bufferingNewest(256))
    }

    /// Connects and exports the presence and search. GLib thread.
    func start() throws {
        var error: UnsafeMutablePointer<GError>?
        guard let c = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else { throw GLibError(error, "no session bus") }
        connection = c
        presence = try PresenceInterface(connection: c, loop: loop) { [weak self] method, arguments, invocation in
            self?.send(.presence(method: method, arguments: arguments, invocation)) ?? invocation.failNow("Gone", "the agent is stopping")
        }
        search = try SearchProviders(connection: c, loop: loop, search: { [weak self] query, invocation in
            self?.send(.search(query, invocation)) ?? invocation.failNow("Gone", "the agent is stopping")
        }, activate: { [weak self] result in self?.send(.activateResult(result)) })
        // Exported first: whoever sees the name appear finds the objects there.
        owner = DBusNames.own(c, Self.busName) { _ in }
        watches = [
            DBusNames.watch(c, "org.gnome.Shell") { [weak self] owner in self?.send(.gnomeShell(owner != nil)) },
            DBusNames.watch(c, Self.extensionBusName) { [weak self] owner in self?.send(.shellExtension(owner != nil)) },
        ]
    }

    /// Shows or hides the tray icon. GLib thread.
    func setTray(_ on: Bool) throws {
        guard let connection else { return }
        if on, item == nil {
            // Both or neither: a menu left on the bus without its item would make every
            // later try fail ("an object is already exported").
            let menu = try DBusMenu(connection: connection, loop: loop, onClick: { [weak self] key in self?.send(.menuClicked(key)) },
                                    onOpen: { [weak self] in self?.send(.menuOpened) })
            let item: StatusNotifierItem
            do {
                item = try StatusNotifierItem(connection: connection, loop: loop, menuPath: DBusMenu.path,
                                              onActivate: { [weak self] in self?.send(.activate) },
                                              onHost: { [weak self] state in self?.send(.trayHost(state)) })
            } catch {
                menu.close()
                throw error
            }
            menu.show(layout, MenuLayout.Changes())
            self.menu = menu
            item.show(lastLook)
            self.item = item
        } else if !on, let item {
            item.close()
            menu?.close()
            self.item = nil
            menu = nil
            send(.trayHost(.none))
        }
    }

    var trayShown: Bool { item != nil }

    /// Publication `sequence` of the presence: its properties, the icon's look, and the
    /// menu's entries (laid out here, so that what changed is worked out against what the
    /// panels were last told). GLib thread.
    func show(_ sequence: UInt64, properties: [DBusEntry], look: StatusNotifierItem.Look, menu entries: [PresenceMenu.Entry]) {
        guard sequence > shown else { return }
        shown = sequence
        lastLook = look
        let changes = layout.update(entries)
        presence?.show(properties)
        menu?.show(layout, changes)
        item?.show(look)
    }

    func remember(_ metas: [ShellSearch.Meta]) { search?.remember(metas) }

    func close() {
        for w in watches { g_bus_unwatch_name(w) }
        watches = []
        item?.close()
        menu?.close()
        search?.close()
        presence?.close()
        item = nil
        menu = nil
        search = nil
        presence = nil
        if owner != 0 { g_bus_unown_name(owner); owner = 0 }
        continuation.finish()
    }

    /// `handoff-session --activate`: asks the agent on the session bus (D-Bus starts it if
    /// need be) to continue the newest offer. Throws what went wrong, for the person.
    public static func activateRunningAgent() throws {
        var error: UnsafeMutablePointer<GError>?
        guard let c = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else { throw GLibError(error, "no session bus") }
        defer { g_object_unref(UnsafeMutableRawPointer(c)) }
        guard let reply = g_dbus_connection_call_sync(c, busName, PresenceInterface.path, PresenceInterface.interface, "Activate", nil, nil,
                                                      G_DBUS_CALL_FLAGS_NONE, 30_000, nil, &error) else {
            throw GLibError(error, "the session agent did not answer")
        }
        g_variant_unref(reply)
    }

    /// To the agent. A call that cannot wait its turn is answered now, never left hanging.
    private func send(_ command: Command) {
        if case .dropped(let dropped) = continuation.yield(command) {
            switch dropped {
            case .presence(_, _, let invocation), .search(_, let invocation): invocation.failNow("Busy", "the session agent is busy; try again")
            default: break
            }
        }
    }
}
