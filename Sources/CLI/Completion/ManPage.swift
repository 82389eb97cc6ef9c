/// `aasa-server.1`: the manual page, generated from the same option table as the completions and from
/// each command's help, in man(7) roff.
enum ManPage {
    /// `date`: the page's date, YYYY-MM-DD.
    static func render(_ table: OptionTable, version: String, date: String) -> String {
        var out = """
            .TH AASA-SERVER 1 \(date) "aasa-server \(escape(version))" "User Commands"
            .SH NAME
            aasa-server \\- host, generate and check apple-app-site-association files for universal links
            .SH SYNOPSIS
            .B aasa-server
            .I command
            .RI [ options ]
            .br
            .B aasa-server help
            .I command
            .SH DESCRIPTION
            aasa-server serves the apple-app-site-association (AASA) file, and Android's assetlinks.json, of
            every host in one JSON config, and checks, generates and explains them.
            Every command below prints its full help with
            .BR "aasa-server help " \\fIcommand\\fR.
            .SH COMMANDS

            """
        for command in table.commands {
            out += ".SS \(command.name)\n\(escape(command.abstract))\n"
            if let usage = usage(of: command.help) { out += ".PP\n.nf\n\(escape(usage))\n.fi\n" }
            if let positional = command.positionalName { out += ".PP\nArguments: \\fI\(escape(positional))\\fR.\n" }
            for option in command.options {
                out += ".TP\n.B \(escape(option.name))"
                if !option.valueName.isEmpty { out += " \\fI\(escape(option.valueName))\\fR" }
                out += "\n\(escape(option.summary.isEmpty ? "(see aasa-server help \(command.name))" : option.summary))\n"
            }
        }
        out += """
            .SH EXIT STATUS
            .TP
            .B 0
            Success: no errors; for match, every URL opens an app.
            .TP
            .B 1
            Findings: errors (or warnings with \\-\\-strict), or a URL that opens no app.
            .TP
            .B 2
            A usage error or unreadable input.
            .SH FILES
            .TP
            .I /etc/aasa\\-server/config.json
            The config of the packaged service.
            .TP
            .I /var/lib/aasa\\-server
            The packaged service's state: fetch records and ACME storage.
            .SH SEE ALSO
            .BR curl (1),
            .BR openssl (1)

            """
        return out
    }

    /// The USAGE lines of a command's help.
    static func usage(of help: String) -> String? {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.trimmingPrefix(" ").hasPrefix("USAGE:") }) else { return nil }
        var block = [String(lines[start].drop { $0 == " " }.dropFirst("USAGE: ".count))]
        for line in lines[(start + 1)...] {
            guard !line.allSatisfy({ $0 == " " }) else { break }
            block.append(String(line.drop { $0 == " " }))
        }
        return block.joined(separator: "\n    ")
    }

    /// Text as roff reads it: backslashes and hyphens escaped, no line taken for a request.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            // A place a long word (a JSON shape, a URL) may break, so no line overflows.
            case ",", "/": out += "\(character)\\:"
            default: out.append(character)
            }
        }
        return out.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
        }.joined(separator: "\n")
    }
}

extension Substring {
    fileprivate func trimmingPrefix(_ character: Character) -> Substring { drop { $0 == character } }
}
