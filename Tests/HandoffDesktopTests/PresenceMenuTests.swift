import HandoffControlAPI
import HandoffCore
@testable import HandoffDesktop
import Testing

@Suite("Presence menu")
struct PresenceMenuTests {
    let now = Timestamp(seconds: 1_800_000_000)

    func offer(_ title: String, device: String = "laptop", deviceID: String = "DEV-LAPTOP", id: ActivityID = .random(), age: Double = 0,
               kept: Bool = false, searchable: Bool = false, keywords: [String] = []) -> Presence.Offer {
        var a = Activity(id: id, activityType: "org.example.editor.edit-note", title: title, createdAt: now, origin: DeviceRef(name: device, id: deviceID))
        a.eligibleForSearch = searchable
        a.keywords = keywords
        return Presence.Offer(device: PeerDevice(id: deviceID, name: device), activity: ActivitySummary(a, payloadSize: 10),
                              offeredAt: now.adding(nanoseconds: -Int64(age * 1e9)), kept: kept, app: Presence.App(id: "org.example.Editor.desktop", name: "Editor", icon: "accessories-text-editor"))
    }

    func label(_ e: PresenceMenu.Entry) -> String? { e.properties.first { $0.key == "label" }?.value.string }

    @Test func anEmptyPresenceSaysSoAndOffersPairing() {
        var p = Presence()
        p.sources = ["media", "clipboard"]
        p.sourcesOff = ["media"]
        let entries = PresenceMenu.entries(p, at: now)
        #expect(entries.map(\.key) == ["offers/none", "separator/offers", "pair", "sources"])
        #expect(entries[0].properties.contains(DBusEntry("enabled", .bool(false))))
        let sources = entries[3].children
        #expect(sources.map(\.key) == ["source/media", "source/clipboard"])
        #expect(sources[0].properties.contains(DBusEntry("toggle-state", .int32(0))))
        #expect(sources[1].properties.contains(DBusEntry("toggle-state", .int32(1))))
        #expect(PresenceMenu.action(forKey: "source/media", in: p) == .setSource("media", enabled: true))
        #expect(PresenceMenu.action(forKey: "source/clipboard", in: p) == .setSource("clipboard", enabled: false))
        #expect(PresenceMenu.action(forKey: "pair", in: p) == .pair)
        #expect(PresenceMenu.action(forKey: "offers/none", in: p) == nil)
    }

    /// KDE Connect: a phone asking to pair shows its key, to accept or refuse; a paired,
    /// reachable phone takes the newest activity; one not reachable or not paired shows nothing.
    @Test func phonesAskToPairOrTakeTheActivity() {
        var p = Presence()
        p.phones = [
            KDEConnectDevice(id: "phoneid00000000000000000000000001", name: "Pixel \u{202E}evil", type: "phone", protocolVersion: 8, paired: false,
                             reachable: true, pairing: "requested-by-peer", verificationKey: "7E09F2A3"),
            KDEConnectDevice(id: "phoneid00000000000000000000000002", name: "Tablet", type: "tablet", protocolVersion: 7, paired: true, reachable: true),
            KDEConnectDevice(id: "phoneid00000000000000000000000003", name: "Away", type: "phone", protocolVersion: 8, paired: true, reachable: false),
        ]
        let entries = PresenceMenu.entries(p, at: now)
        let keys = entries.map(\.key)
        #expect(keys.contains("phone-accept/phoneid00000000000000000000000001") && keys.contains("phone-reject/phoneid00000000000000000000000001"))
        #expect(keys.contains("phone-send/phoneid00000000000000000000000002") && !keys.contains { $0.hasSuffix("00000003") })
        let accept = entries.first { $0.key.hasPrefix("phone-accept/") }!
        #expect(label(accept)?.contains("(key 7E09F2A3)") == true && label(accept)?.contains("\u{202E}") == false, "\(label(accept) ?? "")")
        #expect(label(entries.first { $0.key.hasPrefix("phone-send/") }!) == "Continue on \u{201C}Tablet\u{201D}")
        #expect(PresenceMenu.action(forKey: "phone-accept/phoneid00000000000000000000000001", in: p) == .acceptPhone("phoneid00000000000000000000000001"))
        #expect(PresenceMenu.action(forKey: "phone-reject/phoneid00000000000000000000000001", in: p) == .rejectPhone("phoneid00000000000000000000000001"))
        #expect(PresenceMenu.action(forKey: "phone-send/phoneid00000000000000000000000002", in: p) == .continueOnPhone("phoneid00000000000000000000000002"))
    }

    @Test func eachOfferContinuesItselfAndTheRemovedPairAgainAsNew() throws {
        var p = Presence()
        let o = offer("Shopping list")
        p.offers = [o]
        p.removed = true
        let entries = PresenceMenu.entries(p, at: now)
        #expect(label(entries[0]) == "Continue \u{201C}Shopping list\u{201D} from laptop")
        #expect(entries[0].properties.contains(DBusEntry("icon-name", .string("accessories-text-editor"))))
        #expect(PresenceMenu.action(forKey: entries[0].key, in: p) == .continueOffer(deviceID: "DEV-LAPTOP", activityID: o.activity.id.rawValue))
        #expect(entries.contains { $0.key == "pair-new-identity" } && !entries.contains { $0.key == "pair" })
        p.offers = [offer("Sleepy", kept: true)]
        #expect(label(PresenceMenu.entries(p, at: now)[0])?.hasSuffix("(asleep, kept here)") == true)
    }

    @Test func pairingShowsWhileAWindowIsOpenOnly() {
        let open = Timestamp(seconds: 1_800_000_100)
        #expect(Presence.pairing(PairingStatus(state: .waiting, expiresAt: open))?.state == .waiting)
        #expect(Presence.pairing(PairingStatus(state: .failed, expiresAt: open, message: "wrong code"))?.state == .failed, "failed, still open")
        #expect(Presence.pairing(PairingStatus(state: .failed, message: "cancelled")) == nil, "failed and closed")
        #expect(Presence.pairing(PairingStatus(state: .paired)) == nil)
        #expect(Presence.pairing(PairingStatus(state: .closed)) == nil)
        var p = Presence()
        p.pairing = Presence.pairing(PairingStatus(state: .code, expiresAt: open, code: "123456", peer: PeerDevice(id: "D", name: "desk")))
        let labels = PresenceMenu.entries(p, at: now).compactMap(label)
        #expect(labels.contains("Pairing with desk: code 123 456, confirm in the notification") && labels.contains("Stop pairing"), "\(labels)")
        #expect(!labels.contains("Pair a workstation…"))
    }

    @Test func hostileTitlesShowAsOneShortLineOfText() {
        var p = Presence()
        p.offers = [offer(String(repeating: "x", count: 10_000)), offer("<b>bold</b> &amp;\nline two_x"), offer("a\u{202E}b")]
        let labels = PresenceMenu.entries(p, at: now).prefix(3).compactMap(label)
        #expect(labels[0].count < 100, "a 10 KB title is shortened")
        #expect(labels[0].contains("…"))
        // Markup stays text (dbusmenu labels are not markup), the newline is a space, and
        // an underscore is doubled so that it is not a mnemonic.
        #expect(labels[1] == "Continue \u{201C}<b>bold</b> &amp; line two__x\u{201D} from laptop")
        #expect(labels[2] == "Continue \u{201C}a b\u{201D} from laptop", "a lone direction override is no character to show")
        #expect(MenuText.escaped("<b>&amp;") == "&lt;b&gt;&amp;amp;")
    }

    @Test func fiveHundredOffersShowTheNewestFewAndMore() {
        var p = Presence()
        p.offers = (0..<500).map { offer("Note \($0)", age: Double($0)) }
        let entries = PresenceMenu.entries(p, at: now)
        let offers = entries.filter { $0.key.hasPrefix("offer/") }
        #expect(offers.count == PresenceMenu.shownOffers)
        #expect(label(offers[0]) == "Continue \u{201C}Note 0\u{201D} from laptop", "newest first")
        let more = try! #require(entries.first { $0.key == "offers/more" })
        #expect(label(more) == "More (495)…")
        #expect(more.children.count == PresenceMenu.moreLimit + 1)
        #expect(label(more.children.last!) == "\(495 - PresenceMenu.moreLimit) more: handoffctl list")
        var layout = MenuLayout()
        _ = layout.update(entries)
        #expect(layout.nodes.count < 60, "the menu stays small whatever is offered")
    }

    @Test func aForeignCopyCanBePastedHereAndALocalOneCannot() throws {
        var p = Presence()
        let id = try #require(ClipboardID("0123456789abcdef0123456789abcdef"))
        p.clipboard = ClipboardRecord(id: id, formats: [ClipboardFormat(type: "text/plain;charset=utf-8", size: 1234)],
                                      device: PeerDevice(id: "D", name: "desk"), local: false, copiedAt: now, expiresAt: now.adding(nanoseconds: 600_000_000_000))
        let paste = try #require(PresenceMenu.entries(p, at: now).first { $0.key.hasPrefix("paste/") })
        #expect(label(paste) == "Paste here what desk copied (text, 1.2 kB)")
        #expect(PresenceMenu.action(forKey: paste.key, in: p) == .paste(id))
        p.clipboard?.local = true
        #expect(!PresenceMenu.entries(p, at: now).contains { $0.key.hasPrefix("paste/") })
        p.clipboard?.local = false
        #expect(!PresenceMenu.entries(p, at: now.adding(nanoseconds: 601_000_000_000)).contains { $0.key.hasPrefix("paste/") }, "expired")
    }

    // MARK: - Layout and its updates

    @Test func idsStayWithTheirEntriesAndAChangedTitleIsAPropertyUpdate() {
        var p = Presence()
        let a = offer("First"), b = offer("Second", device: "desk", deviceID: "DEV-DESK")
        p.offers = [a]
        var layout = MenuLayout()
        let first = layout.update(PresenceMenu.entries(p, at: now))
        #expect(first.layout == [0])
        let idA = layout.id(of: PresenceMenu.offerKey(a))!

        // A new offer changes the root's children: one LayoutUpdated, for the root.
        p.offers = [b, a]
        let revision = layout.revision
        let added = layout.update(PresenceMenu.entries(p, at: now))
        #expect(added.layout == [0] && added.updated.isEmpty)
        #expect(layout.revision == revision + 1)
        #expect(layout.id(of: PresenceMenu.offerKey(a)) == idA, "an entry keeps its id")

        // The same offer with a new title: only its label changes, nothing is laid out again.
        var renamed = a
        renamed.activity.title = "First, renamed"
        p.offers = [b, renamed]
        let changed = layout.update(PresenceMenu.entries(p, at: now))
        #expect(changed.layout.isEmpty)
        #expect(changed.updated.map(\.id) == [idA])
        #expect(changed.updated.first?.properties == [DBusEntry("label", .string("Continue \u{201C}First, renamed\u{201D} from laptop"))])
        #expect(layout.revision == revision + 1, "no new revision without a new layout")

        // Nothing changed: nothing to say.
        #expect(layout.update(PresenceMenu.entries(p, at: now)).isEmpty)

        // A device that goes away leaves the menu at once, and its id is never used again.
        p.offers = [renamed]
        let gone = layout.update(PresenceMenu.entries(p, at: now))
        #expect(gone.layout == [0])
        let idB = layout.id(of: PresenceMenu.offerKey(b))
        #expect(idB == nil)
        p.offers = [offer("Third")]
        _ = layout.update(PresenceMenu.entries(p, at: now))
        #expect(layout.nodes.keys.filter { $0 > idA }.count >= 1)
    }

    @Test func aChangeInsideASubmenuReloadsOnlyThatSubmenu() throws {
        var p = Presence()
        p.sources = ["media", "clipboard"]
        var layout = MenuLayout()
        _ = layout.update(PresenceMenu.entries(p, at: now))
        let sources = try #require(layout.id(of: "sources"))
        let media = try #require(layout.id(of: "source/media"))
        // Turning a source off changes one property of one entry.
        p.sourcesOff = ["media"]
        let toggled = layout.update(PresenceMenu.entries(p, at: now))
        #expect(toggled.layout.isEmpty)
        #expect(toggled.updated.map(\.id) == [media])
        // A new source is a new child of the submenu: the submenu is laid out again, not the root.
        p.sources = ["media", "clipboard", "browser"]
        #expect(layout.update(PresenceMenu.entries(p, at: now)).layout == [sources])
    }

    @Test func theLayoutAnswersAsGetLayoutDoes() throws {
        var p = Presence()
        p.sources = ["media"]
        var layout = MenuLayout()
        _ = layout.update(PresenceMenu.entries(p, at: now))
        let sources = try #require(layout.id(of: "sources"))
        guard case .tuple(let root)? = layout.layout(0, depth: 1, properties: ["label"]) else { Issue.record("no root"); return }
        #expect(root[0] == .int32(0))
        let children = root[2].items.map(\.unboxed)
        #expect(children.count == 4)
        // Depth 1: the submenu comes without its children; only the names asked for.
        guard case .tuple(let sub) = children[3] else { Issue.record("no submenu"); return }
        #expect(sub[0] == .int32(sources) && sub[2].items.isEmpty)
        #expect(sub[1] == .dictionary([DBusEntry("label", .string("Sources"))]))
        #expect(layout.layout(9999, depth: -1, properties: []) == nil)
        #expect(layout.layout(0, depth: -1, properties: [])?.signature == "(ia{sv}av)")
    }
}

@Suite("Menu text")
struct MenuTextTests {
    @Test func lines() {
        #expect(MenuText.line("  a \n\t b  ", limit: 10) == "a b")
        #expect(MenuText.line("abcdefghij", limit: 10) == "abcdefghij")
        #expect(MenuText.line("abcdefghijk", limit: 10) == "abcdefghi…")
        #expect(MenuText.line("abcd efghijk", limit: 6) == "abcd…")
        #expect(MenuText.line("", limit: 5) == "")
        #expect(MenuText.line("👨‍👩‍👧 family", limit: 20) == "👨‍👩‍👧 family", "a joined emoji is one character, kept")
        #expect(MenuText.line(String(repeating: " ", count: 1_000_000) + "x", limit: 5) == "x")
        #expect(MenuText.label("a_b") == "a__b")
        let stacked = "a" + String(repeating: "\u{0301}", count: 30_000) + "b"
        #expect(MenuText.line(stacked, limit: 10) == "ab", "a letter under 30,000 combining marks is the letter")
        #expect(MenuText.line("e\u{0301}te\u{0301}", limit: 10) == "e\u{0301}te\u{0301}", "a few marks are kept")
        #expect(MenuText.size(999) == "999 B" && MenuText.size(1234) == "1.2 kB" && MenuText.size(2_000_000) == "2 MB")
    }
}
