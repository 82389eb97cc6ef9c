import Posix
import Support

enum ManPageCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "manpage",
        abstract: "Print the manual page, aasa-server.1 (man(7) roff).",
        help: """
            OVERVIEW: Print the manual page in man(7) roff, generated from the options every command
            accepts and their help.

            USAGE: aasa-server manpage

            EXAMPLE:
              aasa-server manpage > /usr/local/share/man/man1/aasa-server.1 && man aasa-server

            OPTIONS:
              --help   Show this help.

            EXIT STATUS: 0 printed, 2 usage error.

            """,
        spec: ArgumentSpec(),
        run: { _, console in
            let now = CivilTime(unixSeconds: Int(Posix.unixTime()))
            console.out(ManPage.render(OptionTable(CommandLineTool.subcommands), version: CommandLineTool.version, date: now.isoDay))
            return ExitStatus.success
        }
    )
}
