import HandoffCore
@testable import HandoffDesktop
import Testing

/// `XDG_CURRENT_DESKTOP` as each desktop's session manager sets it, and the advice doctor
/// gives there.
struct DesktopKindTests {
    @Test(arguments: [
        ("GNOME", DesktopKind.gnome), ("ubuntu:GNOME", .gnome), ("GNOME-Classic:GNOME", .gnome), ("KDE", .plasma),
        ("XFCE", .xfce), ("sway", .wlroots), ("Hyprland", .wlroots), ("X-Cinnamon", .cinnamon), ("MATE", .mate),
        ("LXQt", .lxqt), ("Budgie:GNOME", .budgie), ("Pantheon", .other), ("", .other), (":::", .other),
    ])
    func theSessionsNameSaysTheDesktop(name: String, kind: DesktopKind) {
        #expect(DesktopKind(currentDesktop: name) == kind)
    }

    @Test func noNameIsOther() {
        #expect(DesktopKind(currentDesktop: nil) == .other)
    }

    /// Each desktop's tray advice names its own way; GNOME's names handoff's extension.
    @Test func theTrayFixNamesThisDesktopsWay() {
        #expect(DesktopKind.gnome.trayFix.contains("gnome-extensions enable handoff@handoff.org"))
        #expect(DesktopKind.plasma.trayFix.contains("System Tray widget"))
        #expect(DesktopKind.xfce.trayFix.contains("Status Tray Plugin"))
        #expect(DesktopKind.wlroots.trayFix.contains("waybar"))
        #expect(!DesktopKind.plasma.trayFix.contains("GNOME"))
        #expect(DesktopKind.other.trayFix.contains("GNOME") && DesktopKind.other.trayFix.contains("waybar"))
        #expect(DesktopKind.gnome.clipboardFix.contains("import-environment DISPLAY"))
        #expect(DesktopKind.wlroots.clipboardFix.contains("data-control"))
    }

    /// GNOME reads a new clipboard whole at once (an image, else text): only small text is
    /// offered there at once; elsewhere everything is.
    @Test func gnomeHoldsBackWhatItWouldReadWhole() {
        func f(_ type: String, _ size: Int64?) -> ClipboardFormat { ClipboardFormat(type: type, size: size) }
        let gnome = DesktopKind.gnome
        #expect(!gnome.readsWholeAtOnce([f("text/plain;charset=utf-8", 10)]))
        #expect(!gnome.readsWholeAtOnce([f("text/plain;charset=utf-8", nil), f("text/html", 50 << 20)]), "X11 copies say no size; html is not read")
        #expect(!gnome.readsWholeAtOnce([f("text/plain", 1 << 20)]))
        #expect(gnome.readsWholeAtOnce([f("text/plain", (1 << 20) + 1)]))
        #expect(gnome.readsWholeAtOnce([f("TEXT/PLAIN;charset=utf-8", 5 << 20)]))
        #expect(gnome.readsWholeAtOnce([f("text/plain;charset=utf-8", 3), f("image/png", 100)]), "an image wins over text in Mutter's choice")
        #expect(gnome.readsWholeAtOnce([f("image/jpeg", nil)]))
        #expect(!gnome.readsWholeAtOnce([]))
        for other in [DesktopKind.plasma, .xfce, .wlroots, .other] {
            #expect(!other.readsWholeAtOnce([f("image/png", 100 << 20)]))
        }
    }
}
