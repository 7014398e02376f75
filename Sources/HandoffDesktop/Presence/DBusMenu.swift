import CGIO

/// The tray's menu as `com.canonical.dbusmenu` (version 3) serves it: a panel reads the
/// layout (`GetLayout`), keeps it, and reads it again where `LayoutUpdated` says; changed
/// entries come in `ItemsPropertiesUpdated`. A click is `Event(id, "clicked", ...)`.
/// GLib thread only.
final class DBusMenu: @unchecked Sendable {
    static let path = "/MenuBar"

    private var object: DBusObject?
    private var layout = MenuLayout()
    private let onClick: (String) -> Void
    private let onOpen: () -> Void

    init(connection: OpaquePointer, loop: GLibLoop, onClick: @escaping (String) -> Void, onOpen: @escaping () -> Void) throws {
        self.onClick = onClick
        self.onOpen = onOpen
        object = try DBusObject(connection: connection, loop: loop, path: Self.path, interface: "com.canonical.dbusmenu", xml: Self.xml,
                                methods: { [weak self] method, arguments, invocation in
            guard let self else { return invocation.failNow("Gone", "the menu is closing") }
            self.call(method, arguments, invocation)
        }, properties: { name in
            switch name {
            case "Version": .uint32(3)
            case "TextDirection": .string("ltr")
            case "Status": .string("normal")
            case "IconThemePath": .array("s", [])
            default: nil
            }
        })
    }

    /// The new menu, and what changed in it (`MenuLayout.update`).
    func show(_ new: MenuLayout, _ changes: MenuLayout.Changes) {
        layout = new
        guard let object else { return }
        if !changes.updated.isEmpty || !changes.removed.isEmpty {
            object.emit("ItemsPropertiesUpdated", [
                .array("(ia{sv})", changes.updated.map { .tuple([.int32($0.id), .dictionary($0.properties)]) }),
                .array("(ias)", changes.removed.map { .tuple([.int32($0.id), .array("s", $0.names.map(DBusValue.string))]) }),
            ])
        }
        for parent in changes.layout { object.emit("LayoutUpdated", [.uint32(layout.revision), .int32(parent)]) }
    }

    private func call(_ method: String, _ a: [DBusValue], _ invocation: DBusInvocation) {
        switch method {
        case "GetLayout":
            let parent = Int32(clamping: a[0].int ?? 0), depth = Int(a[1].int ?? -1)
            guard let tree = layout.layout(parent, depth: depth, properties: a[2].strings) else {
                return invocation.failNow("NoSuchItem", "no menu entry \(parent)")
            }
            invocation.returnNow([.uint32(layout.revision), tree])
        case "GetGroupProperties":
            let ids = a[0].items.compactMap { $0.int.map { Int32(clamping: $0) } }
            // No ids: every entry, as libdbusmenu reads it.
            let wanted = ids.isEmpty ? layout.nodes.keys.sorted() : ids
            invocation.returnNow([.array("(ia{sv})", wanted.prefix(1024).compactMap { id in
                layout.properties(of: id, a[1].strings).map { .tuple([.int32(id), .dictionary($0)]) }
            })])
        case "GetProperty":
            let id = Int32(clamping: a[0].int ?? -1)
            guard let value = layout.properties(of: id, [a[1].string ?? ""])?.first?.value else {
                return invocation.failNow("NoSuchProperty", "menu entry \(id) has no such property")
            }
            invocation.returnNow([.variant(value)])
        case "Event":
            invocation.returnNow([])
            event(Int32(clamping: a[0].int ?? -1), a[1].string ?? "")
        case "EventGroup":
            var errors: [DBusValue] = []
            for e in a[0].items.prefix(64) {
                let id = Int32(clamping: e.items.first?.int ?? -1)
                if layout.nodes[id] == nil { errors.append(.int32(id)) } else { event(id, e.items.dropFirst().first?.string ?? "") }
            }
            invocation.returnNow([.array("i", errors)])
        case "AboutToShow":
            if Int32(clamping: a[0].int ?? -1) == 0 { onOpen() }
            invocation.returnNow([.bool(false)])
        case "AboutToShowGroup":
            let ids = a[0].items.compactMap { $0.int.map { Int32(clamping: $0) } }
            if ids.contains(0) { onOpen() }
            invocation.returnNow([.array("i", []), .array("i", ids.filter { layout.nodes[$0] == nil }.prefix(1024).map(DBusValue.int32))])
        default:
            invocation.failNow("UnknownMethod", method)
        }
    }

    private func event(_ id: Int32, _ kind: String) {
        guard kind == "clicked", let key = layout.key(of: id), !key.isEmpty else { return }
        onClick(key)
    }

    func close() {
        object?.unregister()
        object = nil
    }

    static let xml = """
        <node>
          <interface name="com.canonical.dbusmenu">
            <property name="Version" type="u" access="read"/>
            <property name="TextDirection" type="s" access="read"/>
            <property name="Status" type="s" access="read"/>
            <property name="IconThemePath" type="as" access="read"/>
            <method name="GetLayout">
              <arg type="i" name="parentId" direction="in"/>
              <arg type="i" name="recursionDepth" direction="in"/>
              <arg type="as" name="propertyNames" direction="in"/>
              <arg type="u" name="revision" direction="out"/>
              <arg type="(ia{sv}av)" name="layout" direction="out"/>
            </method>
            <method name="GetGroupProperties">
              <arg type="ai" name="ids" direction="in"/>
              <arg type="as" name="propertyNames" direction="in"/>
              <arg type="a(ia{sv})" name="properties" direction="out"/>
            </method>
            <method name="GetProperty">
              <arg type="i" name="id" direction="in"/>
              <arg type="s" name="name" direction="in"/>
              <arg type="v" name="value" direction="out"/>
            </method>
            <method name="Event">
              <arg type="i" name="id" direction="in"/>
              <arg type="s" name="eventId" direction="in"/>
              <arg type="v" name="data" direction="in"/>
              <arg type="u" name="timestamp" direction="in"/>
            </method>
            <method name="EventGroup">
              <arg type="a(isvu)" name="events" direction="in"/>
              <arg type="ai" name="idErrors" direction="out"/>
            </method>
            <method name="AboutToShow">
              <arg type="i" name="id" direction="in"/>
              <arg type="b" name="needUpdate" direction="out"/>
            </method>
            <method name="AboutToShowGroup">
              <arg type="ai" name="ids" direction="in"/>
              <arg type="ai" name="updatesNeeded" direction="out"/>
              <arg type="ai" name="idErrors" direction="out"/>
            </method>
            <signal name="ItemsPropertiesUpdated">
              <arg type="a(ia{sv})" name="updatedProps"/>
              <arg type="a(ias)" name="removedProps"/>
            </signal>
            <signal name="LayoutUpdated">
              <arg type="u" name="revision"/>
              <arg type="i" name="parent"/>
            </signal>
            <signal name="ItemActivationRequested">
              <arg type="i" name="id"/>
              <arg type="u" name="timestamp"/>
            </signal>
          </interface>
        </node>
        """
}
