import HandoffControlAPI
import HandoffCore

/// `org.handoff.Presence1` at `/org/handoff/Presence` (Docs/Desktop.md, "The presence
/// on D-Bus"): the presence as properties any shell or panel can render, `Changed` when
/// any of them changes, and the actions the tray has, each done through handoffd's API
/// as `handoffctl` does it. GLib thread only.
final class PresenceInterface: @unchecked Sendable {
    static let path = "/org/handoff/Presence"
    static let interface = "org.handoff.Presence1"

    private var object: DBusObject?
    private var values: [DBusEntry] = []
    private var revision: UInt64 = 0

    init(connection: OpaquePointer, loop: GLibLoop, methods: @escaping DBusObject.Methods) throws {
        object = try DBusObject(connection: connection, loop: loop, path: Self.path, interface: Self.interface, xml: Self.xml,
                                methods: methods, properties: { [weak self] name in
            guard let self else { return nil }
            if name == "Revision" { return .uint64(self.revision) }
            return self.values.first { $0.key == name }?.value
        })
    }

    /// New values (`properties(of:)`): those that changed are announced, then `Changed`.
    func show(_ new: [DBusEntry]) {
        let changed = new.filter { n in !values.contains(n) }
        values = new
        guard !changed.isEmpty else { return }
        revision += 1
        object?.propertiesChanged(changed + [DBusEntry("Revision", .uint64(revision))])
        object?.emit("Changed", [.uint64(revision)])
    }

    func close() {
        object?.unregister()
        object = nil
    }

    /// The properties' values for a presence. Text is as handoffd gave it (a renderer
    /// escapes and shortens it for its own medium); lists are bounded.
    static func properties(of p: Presence, tray: String, at now: Timestamp) -> [DBusEntry] {
        let offers: [DBusValue] = p.offers.prefix(200).map { o in
            var d = [
                DBusEntry("id", .string(o.activity.id.rawValue)), DBusEntry("activityType", .string(o.activity.activityType)),
                DBusEntry("title", .string(o.activity.title)), DBusEntry("device", .string(o.device.name)),
                DBusEntry("deviceID", .string(o.device.id)), DBusEntry("offeredAt", .int64(o.offeredAt.seconds)),
                DBusEntry("kept", .bool(o.kept)), DBusEntry("stale", .bool(o.stale)),
                DBusEntry("searchable", .bool(o.activity.search != nil)),
            ]
            if let url = o.activity.webpageURL { d.append(DBusEntry("webpageURL", .string(url))) }
            if let app = o.app {
                d.append(DBusEntry("app", .string(app.id)))
                d.append(DBusEntry("appName", .string(app.name)))
                if let icon = app.icon { d.append(DBusEntry("icon", .string(icon))) }
            }
            return .dictionary(d)
        }
        var clipboard: [DBusEntry] = []
        if let c = p.clipboard, c.expiresAt > now {
            clipboard = [
                DBusEntry("id", .string(c.id.rawValue)), DBusEntry("device", .string(c.device.name)), DBusEntry("deviceID", .string(c.device.id)),
                DBusEntry("local", .bool(c.local)), DBusEntry("formats", .array("s", c.formats.prefix(64).map { .string($0.type) })),
                DBusEntry("copiedAt", .int64(c.copiedAt.seconds)), DBusEntry("expiresAt", .int64(c.expiresAt.seconds)),
            ]
        }
        var pairing: [DBusEntry] = [DBusEntry("state", .string(p.pairing?.state.rawValue ?? "closed"))]
        if let s = p.pairing {
            if let code = s.code { pairing.append(DBusEntry("code", .string(code))) }
            if let peer = s.peer { pairing.append(DBusEntry("peer", .string(peer.name))) }
            if let e = s.expiresAt { pairing.append(DBusEntry("expiresAt", .int64(e.seconds))) }
            if let m = s.message { pairing.append(DBusEntry("message", .string(m))) }
        }
        return [
            DBusEntry("Offers", .array("a{sv}", offers)),
            DBusEntry("Clipboard", .dictionary(clipboard)),
            DBusEntry("Pairing", .dictionary(pairing)),
            DBusEntry("Sources", .array("(sb)", p.sources.map { .tuple([.string($0), .bool(!p.sourcesOff.contains($0))]) })),
            DBusEntry("Problems", .array("(sss)", p.problems.prefix(64).map { .tuple([.string($0.id), .string($0.detail), .string($0.fix ?? "")]) })),
            DBusEntry("Removed", .bool(p.removed)),
            DBusEntry("Tray", .string(tray)),
        ]
    }

    static let xml = """
        <node>
          <interface name="org.handoff.Presence1">
            <property name="Offers" type="aa{sv}" access="read"/>
            <property name="Clipboard" type="a{sv}" access="read"/>
            <property name="Pairing" type="a{sv}" access="read"/>
            <property name="Sources" type="a(sb)" access="read"/>
            <property name="Problems" type="a(sss)" access="read"/>
            <property name="Removed" type="b" access="read"/>
            <property name="Tray" type="s" access="read"/>
            <property name="Revision" type="t" access="read"/>
            <method name="Continue">
              <arg name="device" type="s" direction="in"/>
              <arg name="activity" type="s" direction="in"/>
              <arg name="outcome" type="s" direction="out"/>
            </method>
            <method name="Activate"/>
            <method name="Paste"><arg name="outcome" type="s" direction="out"/></method>
            <method name="Pair">
              <arg name="new_identity" type="b" direction="in"/>
              <arg name="outcome" type="s" direction="out"/>
            </method>
            <method name="StopPairing"/>
            <method name="SetSource">
              <arg name="name" type="s" direction="in"/>
              <arg name="enabled" type="b" direction="in"/>
            </method>
            <method name="Refresh"/>
            <signal name="Changed"><arg name="revision" type="t"/></signal>
          </interface>
        </node>
        """
}
