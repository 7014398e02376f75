import HandoffControlAPI
import HandoffCore

/// The tray's menu, made from the presence: its entries, each with a key that names what
/// it does ("offer/DEVICE/ID", "paste", "pair", "source/media", ...), so that a click
/// means the same entry however the menu changed since. Pure; `MenuLayout` gives the
/// entries their dbusmenu ids and says what changed between two menus.
public enum PresenceMenu {
    public struct Entry: Sendable, Equatable {
        public var key: String
        /// dbusmenu properties, defaults left out (Docs/Desktop.md, "The tray").
        public var properties: [DBusEntry]
        public var children: [Entry]

        public init(_ key: String, _ properties: [DBusEntry], children: [Entry] = []) {
            self.key = key
            self.properties = properties
            self.children = children
        }
    }

    /// What clicking an entry does.
    public enum Action: Sendable, Equatable {
        case continueOffer(deviceID: String, activityID: String)
        case paste(ClipboardID)
        case pair
        case pairWithNewIdentity
        case stopPairing
        case setSource(String, enabled: Bool)
        case explain(problemID: String)
        /// KDE Connect: send the newest activity to this device, accept or refuse its request.
        case continueOnPhone(String)
        case acceptPhone(String)
        case rejectPhone(String)

        /// The title of the notification that says it failed.
        public var failure: String {
            switch self {
            case .continueOnPhone: "Could not continue on the phone"
            case .acceptPhone, .rejectPhone: "Could not answer the phone"
            case .continueOffer: "Could not continue"
            case .paste: "Could not paste here"
            case .pair, .pairWithNewIdentity, .stopPairing: "Could not pair"
            case .setSource: "Could not switch the source"
            case .explain: "Could not show the problem"
            }
        }
    }

    /// Offers shown at the top; the next ones go under "More…", up to `moreLimit`.
    public static let shownOffers = 5
    public static let moreLimit = 40

    public static func entries(_ p: Presence, at now: Timestamp) -> [Entry] {
        var out: [Entry] = []
        if p.offers.isEmpty {
            out.append(Entry("offers/none", [label("Nothing to continue"), disabled]))
        }
        for o in p.offers.prefix(shownOffers) { out.append(offer(o)) }
        if p.offers.count > shownOffers {
            var more = p.offers.dropFirst(shownOffers).prefix(moreLimit).map(offer)
            let rest = p.offers.count - shownOffers - more.count
            if rest > 0 {
                more.append(Entry("offers/rest", [label("\(rest) more: handoffctl list"), disabled]))
            }
            out.append(Entry("offers/more", [label("More (\(p.offers.count - shownOffers))…"), submenu], children: more))
        }
        out.append(separator("separator/offers"))
        if let copy = p.foreignCopy(at: now) {
            let kind = copy.formats.first.map { describe($0) } ?? "a copy"
            out.append(Entry("paste/\(copy.id.rawValue)", [label("Paste here what \(MenuText.line(copy.device.name, limit: 32)) copied (\(kind))"),
                                                          icon("edit-paste")]))
        }
        out.append(contentsOf: phones(p))
        out.append(contentsOf: pairing(p))
        if !p.sources.isEmpty {
            let sources = p.sources.map { name in
                let on = !p.sourcesOff.contains(name)
                return Entry("source/\(name)", [label(sourceLabel(name)), DBusEntry("toggle-type", .string("checkmark")),
                                                DBusEntry("toggle-state", .int32(on ? 1 : 0))])
            }
            out.append(Entry("sources", [label("Sources"), submenu], children: sources))
        }
        if !p.problems.isEmpty {
            out.append(separator("separator/problems"))
            for problem in p.problems.prefix(8) {
                out.append(Entry("problem/\(problem.id)", [label(MenuText.line(problem.detail, limit: 64)), icon("dialog-warning")]))
            }
        }
        return out
    }

    /// What the entry with `key` does; nil for one that does nothing (a line of text).
    public static func action(forKey key: String, in p: Presence) -> Action? {
        let parts = key.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        switch (parts.first, parts.count) {
        case ("offer", 3): return .continueOffer(deviceID: parts[1], activityID: parts[2])
        case ("paste", 2): return ClipboardID(parts[1]).map(Action.paste)
        case ("pair", 1): return .pair
        case ("pair-new-identity", 1): return .pairWithNewIdentity
        case ("pair-stop", 1): return .stopPairing
        case ("source", 2): return .setSource(parts[1], enabled: p.sourcesOff.contains(parts[1]))
        case ("problem", 2): return .explain(problemID: parts[1])
        case ("phone-send", 2): return .continueOnPhone(parts[1])
        case ("phone-accept", 2): return .acceptPhone(parts[1])
        case ("phone-reject", 2): return .rejectPhone(parts[1])
        default: return nil
        }
    }

    static func offerKey(_ o: Presence.Offer) -> String { "offer/\(o.device.id)/\(o.activity.id.rawValue)" }

    private static func offer(_ o: Presence.Offer) -> Entry {
        var text = "Continue " + MenuText.quoted(o.title) + " from " + MenuText.line(o.device.name.isEmpty ? "another workstation" : o.device.name, limit: 32)
        if o.kept { text += " (asleep, kept here)" }
        var props = [label(text)]
        if let i = o.app?.icon, !i.isEmpty { props.append(icon(MenuText.line(i, limit: 128))) }
        return Entry(offerKey(o), props)
    }

    /// KDE Connect devices: a request to pair shows its key, to compare with the phone's
    /// before accepting; a paired, reachable one can take the newest activity.
    private static func phones(_ p: Presence) -> [Entry] {
        var out: [Entry] = []
        for d in p.phones.prefix(8) {
            let name = MenuText.quoted(d.name)
            if d.pairing == "requested-by-peer" {
                let key = MenuText.line(d.verificationKey ?? "?", limit: 8)
                out.append(Entry("phone-accept/\(d.id)", [label("Pair with \(name) (key \(key))"), icon("list-add")]))
                out.append(Entry("phone-reject/\(d.id)", [label("Refuse \(name)"), icon("process-stop")]))
            } else if d.paired && d.reachable {
                out.append(Entry("phone-send/\(d.id)", [label("Continue on \(name)"), icon("smartphone")]))
            }
        }
        return out
    }

    private static func pairing(_ p: Presence) -> [Entry] {
        var out: [Entry] = []
        if let s = p.pairing, s.state != .closed, s.state != .paired {
            let with = s.peer?.name.isEmpty == false ? " with " + MenuText.line(s.peer!.name, limit: 32) : ""
            let state = switch s.state {
            case .code: "Pairing\(with): code \(s.code.map { "\($0.prefix(3)) \($0.suffix(3))" } ?? "?"), confirm in the notification"
            case .failed: "Pairing: " + MenuText.line(s.message ?? "the last try failed", limit: 60)
            default: "Pairing: looking for your other workstation…"
            }
            out.append(Entry("pairing/state", [label(state), disabled]))
            out.append(Entry("pair-stop", [label("Stop pairing"), icon("process-stop")]))
        } else if p.removed {
            out.append(Entry("pair-new-identity", [label("Pair again as a new workstation…"), icon("view-refresh")]))
        } else {
            out.append(Entry("pair", [label("Pair a workstation…"), icon("list-add")]))
        }
        return out
    }

    private static func sourceLabel(_ name: String) -> String {
        switch name {
        case "media": "Media players"
        case "recent-documents": "Recent documents"
        case "browser": "Browser tabs"
        case "clipboard": "Clipboard"
        default: name
        }
    }

    private static func describe(_ f: ClipboardFormat) -> String {
        let kind = f.type.hasPrefix("text/") ? "text" : f.type.hasPrefix("image/") ? "an image" : MenuText.line(f.type, limit: 40)
        return f.size.map { "\(kind), \(MenuText.size(Int(clamping: $0)))" } ?? kind
    }

    private static func label(_ text: String) -> DBusEntry { DBusEntry("label", .string(MenuText.label(text))) }
    private static func icon(_ name: String) -> DBusEntry { DBusEntry("icon-name", .string(name)) }
    private static let disabled = DBusEntry("enabled", .bool(false))
    private static let submenu = DBusEntry("children-display", .string("submenu"))
    private static func separator(_ key: String) -> Entry { Entry(key, [DBusEntry("type", .string("separator"))]) }
}

/// The menu as dbusmenu serves it: each entry under a number that stays its own while
/// the entry is there (`ids`), a revision that grows when the layout changes, and what a
/// new menu changes (`update`): the parents whose children changed (`LayoutUpdated`) and
/// the entries whose properties changed (`ItemsPropertiesUpdated`), never a rebuild for
/// a change that needs none.
public struct MenuLayout: Sendable, Equatable {
    public struct Node: Sendable, Equatable {
        public var key: String
        public var properties: [DBusEntry]
        public var children: [Int32]
    }

    public struct Changes: Sendable, Equatable {
        /// Parents to refetch, outermost only (a refetch includes everything below).
        public var layout: [Int32] = []
        public var updated: [(id: Int32, properties: [DBusEntry])] = []
        public var removed: [(id: Int32, names: [String])] = []

        public var isEmpty: Bool { layout.isEmpty && updated.isEmpty && removed.isEmpty }

        public static func == (a: Changes, b: Changes) -> Bool {
            a.layout == b.layout && a.updated.map(\.id) == b.updated.map(\.id) && a.updated.map(\.properties) == b.updated.map(\.properties)
                && a.removed.map(\.id) == b.removed.map(\.id) && a.removed.map(\.names) == b.removed.map(\.names)
        }
    }

    public private(set) var nodes: [Int32: Node] = [0: Node(key: "", properties: [DBusEntry("children-display", .string("submenu"))], children: [])]
    public private(set) var revision: UInt32 = 1
    /// Key -> id, for every entry shown now. Ids are never used again for another key.
    private var ids: [String: Int32] = [:]
    private var nextID: Int32 = 1

    public init() {}

    public func id(of key: String) -> Int32? { ids[key] }
    public func key(of id: Int32) -> String? { nodes[id]?.key }

    /// Takes the new entries; returns what changed.
    public mutating func update(_ entries: [PresenceMenu.Entry]) -> Changes {
        var fresh: [Int32: Node] = [0: nodes[0]!]
        var keys: [String: Int32] = [:]
        func place(_ e: PresenceMenu.Entry) -> Int32? {
            // A key twice in one menu keeps its first place only.
            guard keys[e.key] == nil else { return nil }
            let id: Int32
            if let known = ids[e.key] {
                id = known
            } else {
                id = nextID
                nextID = nextID == Int32.max ? 1 : nextID + 1
            }
            keys[e.key] = id
            let children = e.children.compactMap(place)
            fresh[id] = Node(key: e.key, properties: e.properties, children: children)
            return id
        }
        fresh[0]!.children = entries.compactMap(place)

        var changes = Changes()
        var relaid: Set<Int32> = []
        for (id, node) in fresh where nodes[id]?.children != node.children {
            relaid.insert(id)
        }
        // A parent whose ancestor is refetched anyway is left out.
        func parent(of id: Int32, in tree: [Int32: Node]) -> Int32? { tree.first { $0.value.children.contains(id) }?.key }
        var outermost: [Int32] = []
        for id in relaid.sorted() {
            var p = parent(of: id, in: fresh)
            var covered = false
            while let up = p {
                if relaid.contains(up) { covered = true; break }
                p = up == 0 ? nil : parent(of: up, in: fresh)
            }
            if !covered { outermost.append(id) }
        }
        changes.layout = outermost
        func inside(_ id: Int32) -> Bool {
            var p = parent(of: id, in: fresh)
            while let up = p {
                if outermost.contains(up) { return true }
                p = up == 0 ? nil : parent(of: up, in: fresh)
            }
            return false
        }
        for (id, node) in fresh.sorted(by: { $0.key < $1.key }) where id != 0 {
            guard let old = nodes[id], old.properties != node.properties, !inside(id) else { continue }
            let changed = node.properties.filter { p in !old.properties.contains(p) }
            let gone = old.properties.map(\.key).filter { k in !node.properties.contains { $0.key == k } }
            if !changed.isEmpty { changes.updated.append((id, changed)) }
            if !gone.isEmpty { changes.removed.append((id, gone)) }
        }
        nodes = fresh
        ids = keys
        if !changes.layout.isEmpty { revision &+= 1 }
        return changes
    }

    /// `(ia{sv}av)` of `id` and `depth` levels below it (-1: all), with only the named
    /// properties (none named: all). nil for an id not in the menu.
    public func layout(_ id: Int32, depth: Int, properties names: [String]) -> DBusValue? {
        guard let node = nodes[id] else { return nil }
        let children: [DBusValue] = depth == 0 ? [] : node.children.compactMap { child in
            layout(child, depth: depth < 0 ? -1 : depth - 1, properties: names).map(DBusValue.variant)
        }
        return .tuple([.int32(id), .dictionary(properties(of: id, names) ?? []), .array("v", children)])
    }

    public func properties(of id: Int32, _ names: [String]) -> [DBusEntry]? {
        guard let node = nodes[id] else { return nil }
        var props = node.properties
        if !node.children.isEmpty, !props.contains(where: { $0.key == "children-display" }) {
            props.append(DBusEntry("children-display", .string("submenu")))
        }
        return names.isEmpty ? props : props.filter { names.contains($0.key) }
    }
}
