import ArgumentParser

/// `handoffctl --socket PATH status`, `handoffctl --json peers`: the options every command
/// takes, written before the command as docker and tailscale users type them, are moved
/// after the command's name, where the parser looks for them. Anything else before the
/// command is left alone for the parser to report.
enum LeadingOptions {
    static let withValue: Set<String> = ["--socket"]
    static let flags: Set<String> = ["--json"]

    static func reordered(_ args: [String], root: ParsableCommand.Type) -> [String] {
        var leading: [String] = []
        var i = 0
        while i < args.count {
            let a = args[i]
            if flags.contains(a) {
                leading.append(a)
                i += 1
            } else if withValue.contains(a), i + 1 < args.count {
                leading += [a, args[i + 1]]
                i += 2
            } else if withValue.contains(where: { a.hasPrefix($0 + "=") }) {
                leading.append(a)
                i += 1
            } else {
                break
            }
        }
        guard !leading.isEmpty else { return args }
        // The command's path: names of nested subcommands (`devices`, `sources on`).
        var command = root
        var j = i
        while j < args.count, let sub = command.configuration.subcommands.first(where: { name(of: $0) == args[j] || $0.configuration.aliases.contains(args[j]) }) {
            command = sub
            j += 1
        }
        guard j > i else { return args }  // no command follows: the parser says what is wrong
        return Array(args[i..<j]) + leading + Array(args[j...])
    }

    static func name(of command: ParsableCommand.Type) -> String {
        command.configuration.commandName ?? command._commandName
    }
}
