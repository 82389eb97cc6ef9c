/// Every subcommand's options as the parser knows them (its `ArgumentSpec`), with the words its help
/// gives each one: the one table completions and the man page are generated from, so neither can offer
/// an option the parser refuses.
struct OptionTable: Equatable {
    struct Option: Equatable {
        var name: String
        var takesValue: Bool
        var repeatable: Bool
        /// What the help calls its value (`FILE`, `DIR`, `ADDR:PORT`); empty for a flag.
        var valueName: String
        var summary: String

        /// What a shell should offer for the value.
        enum ValueKind: Equatable {
            case none
            case file
            case directory
            case other
        }

        var valueKind: ValueKind {
            guard takesValue else { return .none }
            if valueName.contains("DIR") { return .directory }
            if valueName.contains("FILE") { return .file }
            return .other
        }
    }

    struct Command: Equatable {
        var name: String
        var abstract: String
        var options: [Option]
        var positionalName: String?
        var help: String
    }

    var commands: [Command]

    init(_ subcommands: [CommandLineTool.Subcommand]) {
        commands = subcommands.map { subcommand in
            let described = Self.describedOptions(in: subcommand.help)
            let spec = subcommand.spec
            let names = spec.options + spec.repeatableOptions + spec.flags + ["--help"]
            let options = names.map { name -> Option in
                let words = described[name]
                return Option(
                    name: name,
                    takesValue: spec.options.contains(name) || spec.repeatableOptions.contains(name),
                    repeatable: spec.repeatableOptions.contains(name),
                    valueName: words?.valueName ?? "",
                    summary: words?.summary ?? (name == "--help" ? "Show this help." : "")
                )
            }
            return Command(
                name: subcommand.name,
                abstract: subcommand.abstract,
                options: options,
                positionalName: spec.positionalName,
                help: subcommand.help
            )
        }
    }

    /// `--name VALUE   What it does.` lines of a help text's option list (indented two spaces; the
    /// description may start on the next line), by option name: the value's name and the first line of
    /// the description.
    static func describedOptions(in help: String) -> [String: (valueName: String, summary: String)] {
        var found: [String: (String, String)] = [:]
        let lines = help.split(separator: "\n")
        for (index, line) in lines.enumerated() {
            let trimmed = line.drop { $0 == " " }
            guard line.count - trimmed.count == 2, trimmed.hasPrefix("--") else { continue }
            let name = String(trimmed.prefix { $0 != " " && $0 != "=" })
            guard found[name] == nil else { continue }
            let rest = trimmed.dropFirst(name.count)
            // The description starts after the first run of two spaces; before it, the value's name.
            var valueName = ""
            var summary = ""
            if let gap = rest.firstRange(of: "  ") {
                valueName = rest[..<gap.lowerBound].trimmingCharacters(in: " ")
                summary = rest[gap.upperBound...].trimmingCharacters(in: " ")
            } else {
                valueName = rest.trimmingCharacters(in: " ")
                if index + 1 < lines.count, lines[index + 1].hasPrefix("    ") {
                    summary = lines[index + 1].trimmingCharacters(in: " ")
                }
            }
            found[name] = (valueName, summary)
        }
        return found
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}
