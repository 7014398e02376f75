/// The app that made a copy here, as far as the display server tells: on X11 the
/// clipboard owner window's `WM_CLASS` (its own, or its client leader's) and, for a local
/// client that gives `_NET_WM_PID`, its process name. Wayland's data-control protocol says
/// nothing of the app, so there a copy has none.
struct CopyingApp: Sendable, Equatable {
    /// What names it: `WM_CLASS`'s instance and class, the process name; never empty.
    let names: [String]

    init?(names: [String]) {
        var seen = Set<String>()
        let list = names.filter { !$0.isEmpty && seen.insert($0.lowercased()).inserted }
        guard !list.isEmpty else { return nil }
        self.names = list
    }

    /// Whether the user excluded it: one of its names equals one of `excluded`, ignoring case.
    func isExcluded(by excluded: [String]) -> Bool {
        let wanted = Set(excluded.map { $0.lowercased() })
        return names.contains { wanted.contains($0.lowercased()) }
    }

    /// `WM_CLASS`'s value: two NUL-terminated strings, the instance and the class (ICCCM
    /// §4.1.2.5). Whatever else is there is ignored; names are cut at 256 bytes.
    static func wmClass(_ bytes: [UInt8]) -> [String] {
        bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: true).prefix(2).map {
            String(decoding: $0.prefix(256), as: UTF8.self)
        }
    }
}
