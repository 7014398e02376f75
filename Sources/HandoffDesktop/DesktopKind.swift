import HandoffCore

/// Which desktop this session is, from `XDG_CURRENT_DESKTOP` (a colon-separated list, most
/// specific first: "ubuntu:GNOME", "KDE", "XFCE", "sway"), and what to tell its user when
/// the presence or the clipboard has no way to show or travel here. Doctor's fixes name
/// the user's own desktop's way, not every desktop's.
enum DesktopKind: Equatable, Sendable {
    case gnome, plasma, xfce, wlroots, cinnamon, mate, lxqt, budgie, other

    init(currentDesktop: String?) {
        let names = (currentDesktop ?? "").split(separator: ":").map { $0.lowercased() }
        let known: [(String, DesktopKind)] = [
            ("gnome", .gnome), ("kde", .plasma), ("xfce", .xfce), ("sway", .wlroots), ("hyprland", .wlroots),
            ("wlroots", .wlroots), ("river", .wlroots), ("x-cinnamon", .cinnamon), ("cinnamon", .cinnamon),
            ("mate", .mate), ("lxqt", .lxqt), ("budgie", .budgie),
        ]
        // The first name this knows wins: "Budgie:GNOME" is Budgie, not GNOME.
        self = names.lazy.compactMap { name in known.first { $0.0 == name }?.1 }.first ?? .other
    }

    /// What to do when nothing here shows tray icons (no StatusNotifierWatcher).
    var trayFix: String {
        switch self {
        case .gnome:
            return "GNOME: enable handoff's extension with gnome-extensions enable handoff@handoff.org (installed with the handoff package; log out and in first if it was just installed), or install gnome-shell-extension-appindicator for the tray icon"
        case .plasma:
            return "KDE Plasma: add the System Tray widget to a panel (right-click the panel, Add Widgets\u{2026})"
        case .xfce:
            return "Xfce: add the Status Tray Plugin to a panel (right-click the panel, Panel \u{2192} Add New Items\u{2026})"
        case .wlroots:
            return "run a bar with a tray, such as waybar with its tray module (\"modules-right\": [\"tray\"])"
        case .cinnamon:
            return "Cinnamon: add the Xapp Status Applet to a panel (right-click the panel, Applets)"
        case .mate:
            return "MATE: add the Notification Area to a panel (right-click the panel, Add to Panel\u{2026}), and install ayatana-indicator-application if icons still do not show"
        case .lxqt:
            return "LXQt: add the Status Notifier widget to the panel (right-click the panel, Manage Widgets)"
        case .budgie:
            return "Budgie: add the System Tray applet to a panel (Budgie Desktop Settings, Panel, Applets)"
        case .other:
            return "GNOME: gnome-extensions enable handoff@handoff.org (handoff's own), or sudo apt install gnome-shell-extension-appindicator for the tray icon; Xfce, KDE Plasma, waybar and others show it in their tray or status area"
        }
    }

    /// What to do when the clipboard cannot be shared: a Wayland compositor without the
    /// data-control protocol, and no XWayland to share instead.
    var clipboardFix: String {
        switch self {
        case .gnome:
            return "GNOME carries the clipboard to handoff through XWayland: start handoff-session with DISPLAY set to GNOME's (systemctl --user import-environment DISPLAY XAUTHORITY, then systemctl --user restart handoff-session)"
        default:
            return "use a compositor with the data-control protocol (KDE Plasma's KWin, sway, Hyprland and other wlroots ones), or set DISPLAY to its XWayland's"
        }
    }

    /// Whether offering this copy of another workstation's as this desktop's clipboard
    /// would make the desktop read it whole at once, unasked. GNOME's Mutter keeps a copy
    /// of every new clipboard so that it outlives its owner: an image, up to 200 MiB, else
    /// its text, up to 4 MiB (meta-clipboard-manager.c). Text known to be small (1 MiB at
    /// most, or of no known size: an X11 copy's) is offered anyway; an image or large text
    /// waits for the user's Paste in the menu.
    func readsWholeAtOnce(_ formats: [ClipboardFormat]) -> Bool {
        guard self == .gnome else { return false }
        return formats.contains { format in
            let type = format.type.lowercased()
            return type.hasPrefix("image/") || type.hasPrefix("text/plain") && (format.size ?? 0) > Self.smallText
        }
    }

    static let smallText: Int64 = 1 << 20
}
