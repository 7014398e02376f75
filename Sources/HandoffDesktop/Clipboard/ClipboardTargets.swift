import HandoffCore

/// What a desktop clipboard's offer means for the account, and back: the X11 targets (or
/// Wayland MIME types) of a copy here become the formats announced, and an announced
/// copy's formats become the targets offered to apps here. Pure, so tested alone.
enum ClipboardTargets {
    static let utf8Text = "text/plain;charset=utf-8"

    /// Targets a password manager adds to say "do not keep or share this": such a copy is
    /// never announced (KDE's hint, which KeePassXC and others set on X11 and Wayland).
    static let secretMarkers: Set<String> = ["x-kde-passwordmanagerhint"]

    /// X11's own targets, which describe the selection rather than hold its data.
    static let protocolTargets: Set<String> = ["TARGETS", "TIMESTAMP", "MULTIPLE", "SAVE_TARGETS", "DELETE", "INCR", "INSERT_SELECTION", "INSERT_PROPERTY"]

    /// Legacy X11 text targets served from UTF-8 text (`served` converts `STRING`).
    static let textAliases = ["UTF8_STRING", "TEXT", "STRING"]

    struct Reading: Sendable, Equatable {
        /// What to announce, the owner's order, sizes unknown.
        var formats: [ClipboardFormat]
        /// MIME type to the target to ask the owner for.
        var targetFor: [String: String]
        /// A password manager marked it: announce nothing.
        var secret: Bool
    }

    /// `excluded`: MIME types the user does not want shared, `image/*` for a whole kind.
    static func read(_ targets: [String], excluded: [String] = []) -> Reading {
        var formats: [ClipboardFormat] = []
        var targetFor: [String: String] = [:]
        var secret = false
        func add(_ mime: String, from target: String) {
            guard targetFor[mime] == nil, formats.count < ClipboardOffer.maximumFormats, !isExcluded(mime, excluded) else { return }
            targetFor[mime] = target
            formats.append(ClipboardFormat(type: mime, size: nil))
        }
        for target in targets {
            if secretMarkers.contains(target.lowercased()) { secret = true; continue }
            if protocolTargets.contains(target) { continue }
            if ClipboardFormat.isValidType(target) {
                // A bare text/plain from X11 is usually Latin-1 or the locale's; only the
                // charset-tagged one is known to be UTF-8.
                add(target, from: target)
            } else if target == "UTF8_STRING" {
                add(utf8Text, from: target)
            }
        }
        return Reading(formats: formats, targetFor: targetFor, secret: secret)
    }

    static func isExcluded(_ mime: String, _ patterns: [String]) -> Bool {
        let bare = mime.split(separator: ";", maxSplits: 1).first.map(String.init)?.lowercased() ?? mime.lowercased()
        return patterns.contains { p in
            let p = p.lowercased()
            if p.hasSuffix("/*") { return bare.hasPrefix(p.dropLast()) }
            return bare == p || mime.lowercased() == p
        }
    }

    /// What goes in the requestor's property for `target`: the property's type and bytes.
    /// ICCCM's `STRING` is Latin-1 (a character beyond it becomes `?`); for `TEXT` the owner
    /// picks the encoding, and says UTF-8 by the type `UTF8_STRING`.
    static func served(_ bytes: [UInt8], as target: String) -> (type: String, bytes: [UInt8]) {
        switch target {
        case "STRING":
            return ("STRING", String(decoding: bytes, as: UTF8.self).unicodeScalars.map { $0.value <= 0xFF ? UInt8($0.value) : UInt8(ascii: "?") })
        case "TEXT":
            return ("UTF8_STRING", bytes)
        default:
            return (target, bytes)
        }
    }

    /// The targets to offer apps here for a copy's formats, each with the MIME type it is
    /// served as: every format by its own name, and UTF-8 text also under X11's text names.
    static func offered(_ formats: [ClipboardFormat]) -> [(target: String, mime: String)] {
        var out: [(String, String)] = []
        var seen = Set<String>()
        for f in formats where seen.insert(f.type).inserted { out.append((f.type, f.type)) }
        if let text = formats.first(where: { $0.type.lowercased() == utf8Text || $0.type.lowercased() == "text/plain;charset=utf8" }) {
            for alias in textAliases + ["text/plain"] where seen.insert(alias).inserted { out.append((alias, text.type)) }
        }
        return out
    }
}
