/// Text from other workstations made fit for a panel: one line, short, and read as text.
/// Titles and device names come from other machines and may hold anything (10 KB, a
/// newline, markup): menus show them as one shortened line whose underscores are not
/// mnemonics, tooltips (which Plasma renders as rich text) with markup escaped.
public enum MenuText {
    /// One line of at most `limit` characters: controls and line breaks become spaces,
    /// runs of spaces one, and what is cut ends in "…".
    public static func line(_ text: String, limit: Int) -> String {
        var out = ""
        var count = 0
        var space = false
        // Stops one character past the limit, whatever the input's size.
        for c in text {
            if isBlank(c) {
                space = count > 0
                continue
            }
            if space {
                out.append(" ")
                count += 1
                space = false
            }
            // A base under thousands of combining marks is one character that would
            // still be kilobytes of text to draw: its base alone stands for it.
            out.append(c.unicodeScalars.count > maximumScalarsPerCharacter ? Character(c.unicodeScalars.first!) : c)
            count += 1
            if count > limit { break }
        }
        guard count > limit else { return out }
        return String(out.prefix(max(0, limit - 1))).trimmingSuffixSpaces() + "…"
    }

    /// Scripts need a few marks on a letter (Vietnamese, Devanagari, emoji sequences);
    /// more than this is an attack on whatever draws it.
    public static let maximumScalarsPerCharacter = 16

    private static func isBlank(_ c: Character) -> Bool {
        // All of it: an emoji joined by U+200D is a picture, a lone U+202E only reorders.
        c.isWhitespace || c.unicodeScalars.allSatisfy { s in
            let k = s.properties.generalCategory
            return k == .control || k == .format || k == .lineSeparator || k == .paragraphSeparator
        }
    }

    /// A dbusmenu label: `_` marks a mnemonic there, so a literal one is doubled.
    public static func label(_ text: String) -> String {
        text.replacing("_", with: "__")
    }

    /// Text for a place that renders markup (the tooltip's body).
    public static func escaped(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// A title in quotes, shortened: `“Shopping list”`.
    public static func quoted(_ title: String, limit: Int = 48) -> String {
        "\u{201C}" + line(title, limit: limit) + "\u{201D}"
    }

    /// A size for people: 12 B, 3.4 kB, 1.2 MB.
    public static func size(_ bytes: Int) -> String {
        switch bytes {
        case ..<1000: "\(bytes) B"
        case ..<1_000_000: "\(tenths(bytes, 100)) kB"
        default: "\(tenths(bytes, 100_000)) MB"
        }
    }

    private static func tenths(_ value: Int, _ unit: Int) -> String {
        let t = (value + unit / 2) / unit
        return t % 10 == 0 || t >= 100 ? "\(t / 10)" : "\(t / 10).\(t % 10)"
    }
}

extension String {
    fileprivate func trimmingSuffixSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
