import HandoffCore
import Testing
@testable import HandoffDesktop

/// What an X11 copy's targets announce, and what an announced copy offers the apps here.
@Suite("Clipboard targets")
struct ClipboardTargetsTests {
    @Test func aBrowsersTargetsBecomeMIMETypesInItsOrder() {
        let r = ClipboardTargets.read(["TIMESTAMP", "TARGETS", "MULTIPLE", "SAVE_TARGETS", "text/html", "text/_moz_htmlinfo", "UTF8_STRING",
                                       "COMPOUND_TEXT", "TEXT", "STRING", "text/plain;charset=utf-8", "text/plain", "image/png"])
        #expect(!r.secret)
        // Firefox's text/_moz_htmlinfo is no RFC 6838 name (a subtype starts with a letter or digit).
        #expect(r.formats.map(\.type) == ["text/html", "text/plain;charset=utf-8", "text/plain", "image/png"])
        #expect(r.formats.allSatisfy { $0.size == nil })
        // UTF8_STRING came first, so the UTF-8 text is read as UTF8_STRING.
        #expect(r.targetFor["text/plain;charset=utf-8"] == "UTF8_STRING")
        #expect(r.targetFor["image/png"] == "image/png")
    }

    @Test func aPasswordManagersCopyIsSecret() {
        #expect(ClipboardTargets.read(["UTF8_STRING", "x-kde-passwordManagerHint"]).secret)
        #expect(ClipboardTargets.read(["X-KDE-PASSWORDMANAGERHINT", "TARGETS"]).secret)
        #expect(!ClipboardTargets.read(["UTF8_STRING"]).secret)
    }

    @Test func excludedTypesAndOddTargetsAreLeftOut() {
        let r = ClipboardTargets.read(["image/png", "image/jpeg", "text/html", "UTF8_STRING", "WEIRD ATOM", "application/x-qt-image"],
                                      excluded: ["image/*", "TEXT/HTML"])
        #expect(r.formats.map(\.type) == ["text/plain;charset=utf-8", "application/x-qt-image"])
        #expect(ClipboardTargets.read(["TARGETS", "TIMESTAMP"]).formats.isEmpty)
        #expect(ClipboardTargets.read((0..<100).map { "application/x-n\($0)" }).formats.count == ClipboardOffer.maximumFormats)
    }

    @Test func textIsOfferedUnderX11sNamesToo() {
        let offered = ClipboardTargets.offered([ClipboardFormat(type: "text/plain;charset=utf-8", size: 5), ClipboardFormat(type: "image/png", size: nil)])
        #expect(offered.map(\.target) == ["text/plain;charset=utf-8", "image/png", "UTF8_STRING", "TEXT", "STRING", "text/plain"])
        #expect(Set(offered.filter { $0.target != "image/png" }.map(\.mime)) == ["text/plain;charset=utf-8"])
        #expect(ClipboardTargets.offered([ClipboardFormat(type: "image/png", size: 1)]).map(\.target) == ["image/png"])
    }

    @Test func settingsNameTheClipboard() throws {
        let c = try SessionConfiguration(parsing: "clipboard = no\nclipboard-exclude-types = image/* ; text/html\n", path: "t")
        #expect(!c.clipboard && c.clipboardExcludedTypes == ["image/*", "text/html"])
        #expect(throws: SessionConfiguration.FileError.self) { try SessionConfiguration(parsing: "clipboard-exclude-types = not a type\n", path: "t") }
        #expect(SessionConfiguration().clipboard)
        let apps = try SessionConfiguration(parsing: "clipboard-exclude-apps = keepassxc ; org.example.Vault;\n", path: "t")
        #expect(apps.clipboardExcludedApps == ["keepassxc", "org.example.Vault"])
        #expect(throws: SessionConfiguration.FileError.self) { try SessionConfiguration(parsing: "clipboard-exclude-apps = a\u{7}b\n", path: "t") }
    }

    @Test func legacyTextTargetsAreServedAsICCCMSays() {
        let text = Array("café → ok".utf8)
        #expect(ClipboardTargets.served(text, as: "STRING") == ("STRING", [0x63, 0x61, 0x66, 0xE9, 0x20, 0x3F, 0x20, 0x6F, 0x6B]))
        #expect(ClipboardTargets.served(text, as: "TEXT") == ("UTF8_STRING", text))
        #expect(ClipboardTargets.served(text, as: "UTF8_STRING") == ("UTF8_STRING", text))
        #expect(ClipboardTargets.served([1, 2], as: "image/png") == ("image/png", [1, 2]))
    }

    @Test func anAppIsExcludedByAnyOfItsNamesIgnoringCase() {
        let app = CopyingApp(names: CopyingApp.wmClass(Array("keepassxc\0KeePassXC\0".utf8)) + ["keepassxc"])
        #expect(app?.names == ["keepassxc"])
        #expect(app?.isExcluded(by: ["KEEPASSXC"]) == true)
        #expect(app?.isExcluded(by: ["org.example.Editor"]) == false)
        let editor = CopyingApp(names: CopyingApp.wmClass(Array("gedit\0Gedit".utf8)) + ["gedit-bin"])
        #expect(editor?.names == ["gedit", "gedit-bin"])
        #expect(editor?.isExcluded(by: ["gedit-bin"]) == true)
        #expect(CopyingApp(names: CopyingApp.wmClass([])) == nil)
        #expect(CopyingApp.wmClass(Array("a\0b\0c\0".utf8)) == ["a", "b"])
        #expect(CopyingApp.wmClass(Array(repeating: UInt8(ascii: "x"), count: 1000)).first?.utf8.count == 256)
    }
}
