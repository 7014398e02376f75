import HandoffCore
import HandoffControlAPI

/// handoffd's command line, read with the one table of settings (`DaemonOption`): each
/// setting's flag (`--name desk` or `--name=desk`), `--config FILE`, `--help`, `--version`.
public struct DaemonCommandLine: Sendable, Equatable {
    public enum Request: Sendable, Equatable {
        case run
        case help
        case version
        /// The description `generate-manual` (swift-argument-parser's man page tool) reads.
        case dumpHelp
    }

    public var request: Request = .run
    /// A config file to read instead of the default one.
    public var configFile: String?
    /// Settings in the order given; they are applied after the config file, so they win.
    public var settings: [Setting] = []

    public struct Setting: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    public struct UsageError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public static let overview = "The per-user Handoff daemon: keeps this workstation's current activity and serves it to the user's apps and other workstations."
    public static let discussion = "Settings come from $XDG_CONFIG_HOME/handoff/handoffd.conf (~/.config/handoff/handoffd.conf; key = value lines, keys as the long options below) and then from these options, which win."

    public init() {}

    public static func parse(_ arguments: [String]) throws(UsageError) -> DaemonCommandLine {
        var parsed = DaemonCommandLine()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "-h", "--help": parsed.request = .help; return parsed
            case "--version": parsed.request = .version; return parsed
            case "--experimental-dump-help": parsed.request = .dumpHelp; return parsed
            default: break
            }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw UsageError(description: "unexpected argument \"\(argument)\": handoffd takes only options (handoffd --help lists them)")
            }
            var name = String(argument.dropFirst(2)), inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if let option = DaemonOption.all.first(where: { $0.shorthand?.flag == name }), let shorthand = option.shorthand {
                guard inline == nil else { throw UsageError(description: "--\(name) takes no value") }
                parsed.settings.append(Setting(name: option.name, value: shorthand.value))
                continue
            }
            guard name == "config" || DaemonOption.named(name) != nil else {
                throw UsageError(description: "unknown option --\(name) (handoffd --help lists them)")
            }
            // A value in the next argument is never an option: `--name --help` is a mistake,
            // not a device called "--help" (`--name=--help` says it on purpose).
            if inline == nil, let next = rest.first, next.hasPrefix("-") { throw UsageError(description: "--\(name) needs a value") }
            guard let value = inline ?? rest.popFirst() else { throw UsageError(description: "--\(name) needs a value") }
            if name == "config" { parsed.configFile = value } else { parsed.settings.append(Setting(name: name, value: value)) }
        }
        return parsed
    }

    /// `handoffd --help`.
    public static func help() -> String {
        let shown = DaemonOption.all.filter { !$0.hidden }
        var rows: [(String, String)] = shown.map { o in
            ("--\(o.name) <\(o.valueName)>", o.help + (o.repeatable ? " (repeatable)" : "") + (o.defaultText.map { " (default: \($0))" } ?? ""))
        }
        rows += shown.compactMap { o in o.shorthand.map { ("--\($0.flag)", $0.help) } }
        rows += [("--config <path>", "A config file to read instead of the default one."),
                 ("--version", "Show the version."), ("-h, --help", "Show help information.")]
        let width = min(32, rows.map(\.0.count).max() ?? 0) + 3
        var out = "OVERVIEW: " + wrapped(overview, indent: 0, first: 10) + "\n\n" + wrapped(discussion, indent: 0) + "\n\nUSAGE: handoffd [<options>]\n\nOPTIONS:\n"
        for (flag, text) in rows {
            let lead = "  " + flag
            out += lead + (lead.count < width ? String(repeating: " ", count: width - lead.count) : "\n" + String(repeating: " ", count: width))
            out += wrapped(text, indent: width) + "\n"
        }
        return out
    }

    /// Words in lines of at most 80 columns; lines after the first start at `indent`.
    private static func wrapped(_ text: String, indent: Int, first: Int? = nil) -> String {
        var out = "", column = first ?? indent
        for word in text.split(separator: " ") {
            if column > indent, column + 1 + word.count > 80 {
                out += "\n" + String(repeating: " ", count: indent)
                column = indent
            } else if column > (first ?? indent) || !out.isEmpty {
                out += " "
                column += 1
            }
            out += word
            column += word.count
        }
        return out
    }

    /// swift-argument-parser's `--experimental-dump-help` description (its ToolInfo,
    /// version 0), which `generate-manual` turns into handoffd.1.
    public static func toolInfo() -> JSONValue {
        func argument(_ name: String, valueName: String, abstract: String, flag: Bool, repeating: Bool = false, shown: Bool = true, short: String? = nil) -> JSONValue {
            var names: [JSONValue] = []
            if let short { names.append(.object(["kind": .string("short"), "name": .string(short)])) }
            names.append(.object(["kind": .string("long"), "name": .string(name)]))
            return .object([
                "abstract": .string(abstract), "isOptional": .bool(true), "isRepeating": .bool(repeating), "kind": .string(flag ? "flag" : "option"),
                "names": .array(names), "parsingStrategy": .string("default"),
                "preferredName": .object(["kind": .string("long"), "name": .string(name)]), "shouldDisplay": .bool(shown), "valueName": .string(valueName),
            ])
        }
        var arguments = DaemonOption.all.map { o in
            argument(o.name, valueName: o.valueName, abstract: o.help + (o.defaultText.map { " (default: \($0))" } ?? ""), flag: false,
                     repeating: o.repeatable, shown: !o.hidden)
        }
        arguments += DaemonOption.all.compactMap { o in o.shorthand.map { argument($0.flag, valueName: $0.flag, abstract: $0.help, flag: true) } }
        arguments += [argument("config", valueName: "path", abstract: "A config file to read instead of the default one.", flag: false),
                      argument("version", valueName: "version", abstract: "Show the version.", flag: true),
                      argument("help", valueName: "help", abstract: "Show help information.", flag: true, short: "h")]
        return .object([
            "command": .object([
                "abstract": .string(overview), "arguments": .array(arguments), "commandName": .string("handoffd"),
                "discussion": .string(discussion), "shouldDisplay": .bool(true),
            ]),
            "serializationVersion": .integer(0),
        ])
    }
}
