import CGIO
import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

/// The tray icon: an `org.kde.StatusNotifierItem` (the freedesktop StatusNotifierItem as
/// every panel implements it) whose menu is `DBusMenu`. It owns the name
/// `org.kde.StatusNotifierItem-PID-1` and registers it with the panel's
/// `org.kde.StatusNotifierWatcher`, again each time a watcher appears (a panel started
/// or restarted, an extension enabled). GLib thread only.
final class StatusNotifierItem: @unchecked Sendable {
    static let path = "/StatusNotifierItem"
    static let watcher = "org.kde.StatusNotifierWatcher"

    /// What the icon says; set by `show`.
    struct Look: Equatable {
        var iconName = "handoff"
        var tooltipTitle = "Handoff"
        var tooltipBody = ""
        /// What a screen reader says of the icon: plain text, never markup. GNOME's
        /// AppIndicator extension reads it (`IconAccessibleDesc`, an Ayatana property
        /// libappindicator items have) and names the icon after it.
        var accessibleDescription = "Handoff: nothing to continue"
        /// `Status` Passive rather than Active: panels hide the item (GNOME's AppIndicator
        /// extension does), while it stays registered, ready to show again at once.
        var passive = false
    }

    private let connection: OpaquePointer
    private let loop: GLibLoop
    private var object: DBusObject?
    private var nameOwner: guint = 0
    private var watch: guint = 0
    private var unregistered: guint = 0
    private var reregistrations = 0
    /// The watcher's unique name while there is one (`host` once it took the item).
    private var watcherOwner: String?
    let busName = "org.kde.StatusNotifierItem-\(getpid())-1"
    private var look = Look()
    /// Who hosts it now (the watcher's unique name), for `handoffctl sources`.
    private(set) var host: String?
    private let onActivate: () -> Void
    private let onHost: (HostState) -> Void

    enum HostState: Sendable, Equatable {
        /// No panel here shows tray icons.
        case none
        /// Registered with the watcher owned by this process (pid, name) or unknown.
        case registered(pid: UInt32?)
        case failed(String)
    }

    init(connection: OpaquePointer, loop: GLibLoop, menuPath: String, onActivate: @escaping () -> Void, onHost: @escaping (HostState) -> Void) throws {
        self.connection = connection
        self.loop = loop
        self.onActivate = onActivate
        self.onHost = onHost
        object = try DBusObject(connection: connection, loop: loop, path: Self.path, interface: "org.kde.StatusNotifierItem", xml: Self.xml,
                                methods: { [weak self] method, _, invocation in
            invocation.returnNow([])
            if method == "Activate" { self?.onActivate() }
        }, properties: { [weak self] name in self?.property(name, menuPath: menuPath) })
        nameOwner = DBusNames.own(connection, busName) { _ in }
        watch = DBusNames.watch(connection, Self.watcher) { [weak self] owner in self?.watcherChanged(owner) }
        unregistered = DBusNames.subscribe(connection, sender: Self.watcher, interface: Self.watcher, member: "StatusNotifierItemUnregistered",
                                           path: "/StatusNotifierWatcher") { [weak self] values in self?.dropped(values.first?.string) }
    }

    private func property(_ name: String, menuPath: String) -> DBusValue? {
        switch name {
        case "Category": .string("ApplicationStatus")
        case "Id": .string("handoff")
        case "Title": .string("Handoff")
        // Shown unless another icon shows the presence (`Look.passive`): the icon says
        // whether something waits, not whether it is there.
        case "Status": .string(look.passive ? "Passive" : "Active")
        case "WindowId": .int32(0)
        case "IconThemePath": .string("")
        case "Menu": .objectPath(menuPath)
        case "ItemIsMenu": .bool(false)
        case "IconName": .string(look.iconName)
        case "IconPixmap", "OverlayIconPixmap", "AttentionIconPixmap": .array("(iiay)", [])
        case "OverlayIconName", "AttentionIconName", "AttentionMovieName": .string("")
        case "IconAccessibleDesc": .string(look.accessibleDescription)
        case "AttentionAccessibleDesc": .string("")
        case "ToolTip": .tuple([.string(look.iconName), .array("(iiay)", []), .string(look.tooltipTitle), .string(look.tooltipBody)])
        default: nil
        }
    }

    /// Shows a new look; a panel hears of what changed.
    func show(_ new: Look) {
        let old = look
        look = new
        // Status first: GNOME's AppIndicator extension sets aside what a passive item says
        // changed, and an item shown again is read again whole (its accessible name too,
        // which that extension reads with the icon), as if everything had changed.
        if old.passive != new.passive { object?.emit("NewStatus", [.string(new.passive ? "Passive" : "Active")]) }
        let shownAgain = old.passive && !new.passive
        if shownAgain || old.iconName != new.iconName || old.accessibleDescription != new.accessibleDescription { object?.emit("NewIcon", []) }
        if shownAgain || old.tooltipTitle != new.tooltipTitle || old.tooltipBody != new.tooltipBody || old.iconName != new.iconName {
            object?.emit("NewToolTip", [])
        }
    }

    private func watcherChanged(_ owner: String?) {
        host = nil
        watcherOwner = owner
        reregistrations = 0
        guard let owner else {
            onHost(.none)
            return
        }
        register(owner)
    }

    /// The watcher dropped our item while we are still here. GNOME's AppIndicator extension
    /// does that when an item registers while it is itself looking for items at the shell's
    /// start (the two registrations race, and it destroys the item): a login where the
    /// agent starts with the shell lost its icon. Registered again, a few times at most, so
    /// that a watcher that keeps dropping it is not asked forever.
    private func dropped(_ item: String?) {
        guard let item, item == busName || item.hasPrefix(busName + "/") || item.hasPrefix(busName + "@"),
              object != nil, let owner = watcherOwner, reregistrations < 3 else { return }
        reregistrations += 1
        register(owner)
    }

    private func register(_ owner: String, attempt: Int = 0) {
        DBusNames.call(connection, bus: Self.watcher, path: "/StatusNotifierWatcher", interface: Self.watcher,
                       method: "RegisterStatusNotifierItem", [.string(busName)]) { [weak self] result in
            // A watcher gone or replaced since (a panel restarting, an extension cycled):
            // what it answered no longer matters; the new one is asked on its own.
            guard let self, object != nil, watcherOwner == owner else { return }
            // A watcher that owns its name before its object is on the bus refuses the
            // first call (GNOME's AppIndicator extension, enabled again when an extension
            // before it is disabled: "No such interface"): asked again, a few times, a
            // little later each, before the panel counts as refusing the icon.
            if case .failure = result, attempt < 3 {
                loop.after(0.25 * Double(1 << attempt)) { [weak self] in
                    guard let self, self.object != nil, self.watcherOwner == owner else { return }
                    self.register(owner, attempt: attempt + 1)
                }
                return
            }
            switch result {
            case .success:
                self.host = owner
                DBusNames.call(self.connection, bus: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                               method: "GetConnectionUnixProcessID", [.string(owner)]) { [weak self] pid in
                    let n = (try? pid.get())?.first?.int
                    self?.onHost(.registered(pid: n.flatMap { UInt32(exactly: $0) }))
                }
            case .failure(let e):
                self.onHost(.failed(e.description))
            }
        }
    }

    /// Off the bus: the watcher drops the item when its name goes.
    func close() {
        if unregistered != 0 { g_dbus_connection_signal_unsubscribe(connection, unregistered); unregistered = 0 }
        if watch != 0 { g_bus_unwatch_name(watch); watch = 0 }
        if nameOwner != 0 { g_bus_unown_name(nameOwner); nameOwner = 0 }
        object?.unregister()
        object = nil
    }

    static let xml = """
        <node>
          <interface name="org.kde.StatusNotifierItem">
            <property name="Category" type="s" access="read"/>
            <property name="Id" type="s" access="read"/>
            <property name="Title" type="s" access="read"/>
            <property name="Status" type="s" access="read"/>
            <property name="WindowId" type="i" access="read"/>
            <property name="IconThemePath" type="s" access="read"/>
            <property name="Menu" type="o" access="read"/>
            <property name="ItemIsMenu" type="b" access="read"/>
            <property name="IconName" type="s" access="read"/>
            <property name="IconPixmap" type="a(iiay)" access="read"/>
            <property name="OverlayIconName" type="s" access="read"/>
            <property name="OverlayIconPixmap" type="a(iiay)" access="read"/>
            <property name="AttentionIconName" type="s" access="read"/>
            <property name="AttentionIconPixmap" type="a(iiay)" access="read"/>
            <property name="AttentionMovieName" type="s" access="read"/>
            <property name="ToolTip" type="(sa(iiay)ss)" access="read"/>
            <property name="IconAccessibleDesc" type="s" access="read"/>
            <property name="AttentionAccessibleDesc" type="s" access="read"/>
            <method name="ContextMenu"><arg name="x" type="i" direction="in"/><arg name="y" type="i" direction="in"/></method>
            <method name="Activate"><arg name="x" type="i" direction="in"/><arg name="y" type="i" direction="in"/></method>
            <method name="SecondaryActivate"><arg name="x" type="i" direction="in"/><arg name="y" type="i" direction="in"/></method>
            <method name="Scroll"><arg name="delta" type="i" direction="in"/><arg name="orientation" type="s" direction="in"/></method>
            <method name="ProvideXdgActivationToken"><arg name="token" type="s" direction="in"/></method>
            <signal name="NewTitle"/>
            <signal name="NewIcon"/>
            <signal name="NewAttentionIcon"/>
            <signal name="NewOverlayIcon"/>
            <signal name="NewToolTip"/>
            <signal name="NewStatus"><arg name="status" type="s"/></signal>
            <signal name="NewIconThemePath"><arg name="icon_theme_path" type="s"/></signal>
            <signal name="NewMenu"/>
          </interface>
        </node>
        """
}
