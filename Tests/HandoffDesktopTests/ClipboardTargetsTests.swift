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
    }
}
