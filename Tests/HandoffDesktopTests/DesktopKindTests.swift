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
}
