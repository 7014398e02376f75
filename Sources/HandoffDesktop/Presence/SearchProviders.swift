import CGIO

/// Search from the shell: GNOME Shell's `org.gnome.Shell.SearchProvider2` at
/// `/org/handoff/SearchProvider` and KRunner's `org.kde.krunner1` at `/org/handoff/KRunner`,
/// both on the agent's name `org.handoff.Session`. A query goes to the agent (`search`),
/// which answers from the live offers and handoffd's history within a deadline; the
/// names of the results it gave are kept here, for GNOME Shell's `GetResultMetas`.
/// GLib thread only.
final class SearchProviders: @unchecked Sendable {
    static let gnomePath = "/org/handoff/SearchProvider"
    static let krunnerPath = "/org/handoff/KRunner"

    enum Query: Sendable {
        case gnome(terms: [String])
        case krunner(query: String)
    }

    private var gnome: DBusObject?
    private var krunner: DBusObject?
    /// The metas of recent results by id, oldest first out (a shell asks for the metas of
    /// results it was just given).
    private var metas: [String: ShellSearch.Meta] = [:]
    private var order: [String] = []
    static let rememberedMetas = 512

    init(connection: OpaquePointer, loop: GLibLoop, search: @escaping (Query, DBusInvocation) -> Void,
         activate: @escaping (ShellSearch.Result) -> Void) throws {
        gnome = try DBusObject(connection: connection, loop: loop, path: Self.gnomePath, interface: "org.gnome.Shell.SearchProvider2",
                               xml: Self.gnomeXML, methods: { [weak self] method, a, invocation in
            switch method {
            case "GetInitialResultSet": search(.gnome(terms: a[0].strings), invocation)
            // Searching again is as quick as narrowing the previous results, and sees offers made since.
            case "GetSubsearchResultSet": search(.gnome(terms: a[1].strings), invocation)
            case "GetResultMetas": invocation.returnNow([self?.metas(a[0].strings) ?? .array("a{sv}", [])])
            case "ActivateResult":
                invocation.returnNow([])
                if let r = ShellSearch.Result(id: a[0].string ?? "") { activate(r) }
            default:
                invocation.returnNow([])
            }
        })
        krunner = try DBusObject(connection: connection, loop: loop, path: Self.krunnerPath, interface: "org.kde.krunner1",
                                 xml: Self.krunnerXML, methods: { method, a, invocation in
            switch method {
            case "Match": search(.krunner(query: a[0].string ?? ""), invocation)
            case "Actions": invocation.returnNow([.array("(sss)", [])])
            case "Run":
                invocation.returnNow([])
                if let r = ShellSearch.Result(id: a[0].string ?? "") { activate(r) }
            default:
                invocation.returnNow([])
            }
        })
    }

    /// Keeps the metas of results about to be answered.
    func remember(_ found: [ShellSearch.Meta]) {
        for m in found {
            let id = m.result.id
            if metas.updateValue(m, forKey: id) == nil { order.append(id) }
        }
        if order.count > Self.rememberedMetas {
            for id in order.prefix(order.count - Self.rememberedMetas) { metas[id] = nil }
            order.removeFirst(order.count - Self.rememberedMetas)
        }
    }

    /// One meta per id asked, in order (GNOME Shell matches them by position), each with a
    /// name and an id as it requires: a result no longer known says so.
    private func metas(_ ids: [String]) -> DBusValue {
        .array("a{sv}", ids.prefix(64).map { id in
            let m = metas[id]
            return .dictionary([
                DBusEntry("id", .string(id)), DBusEntry("name", .string(m?.name ?? "No longer available")),
                DBusEntry("description", .string(m?.description ?? "")), DBusEntry("gicon", .string(m?.icon ?? "handoff")),
            ])
        })
    }

    func close() {
        gnome?.unregister()
        krunner?.unregister()
        gnome = nil
        krunner = nil
    }

    static let gnomeXML = """
        <node>
          <interface name="org.gnome.Shell.SearchProvider2">
            <method name="GetInitialResultSet">
              <arg type="as" name="terms" direction="in"/>
              <arg type="as" name="results" direction="out"/>
            </method>
            <method name="GetSubsearchResultSet">
              <arg type="as" name="previous_results" direction="in"/>
              <arg type="as" name="terms" direction="in"/>
              <arg type="as" name="results" direction="out"/>
            </method>
            <method name="GetResultMetas">
              <arg type="as" name="identifiers" direction="in"/>
              <arg type="aa{sv}" name="metas" direction="out"/>
            </method>
            <method name="ActivateResult">
              <arg type="s" name="identifier" direction="in"/>
              <arg type="as" name="terms" direction="in"/>
              <arg type="u" name="timestamp" direction="in"/>
            </method>
            <method name="LaunchSearch">
              <arg type="as" name="terms" direction="in"/>
              <arg type="u" name="timestamp" direction="in"/>
            </method>
          </interface>
        </node>
        """

    static let krunnerXML = """
        <node>
          <interface name="org.kde.krunner1">
            <method name="Actions">
              <arg name="matches" type="a(sss)" direction="out"/>
            </method>
            <method name="Run">
              <arg name="matchId" type="s" direction="in"/>
              <arg name="actionId" type="s" direction="in"/>
            </method>
            <method name="Match">
              <arg name="query" type="s" direction="in"/>
              <arg name="matches" type="a(sssida{sv})" direction="out"/>
            </method>
            <method name="Teardown"/>
          </interface>
        </node>
        """
}
