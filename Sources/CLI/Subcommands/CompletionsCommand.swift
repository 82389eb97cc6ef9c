enum CompletionsCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "completions",
        abstract: "Print the shell completion script for bash, zsh or fish.",
        help: """
            OVERVIEW: Print a completion script for bash, zsh or fish, generated from the options every
            command accepts.

            USAGE: aasa-server completions bash|zsh|fish

            INSTALL:
              bash  aasa-server completions bash > /etc/bash_completion.d/aasa-server
              zsh   aasa-server completions zsh > "${fpath[1]}/_aasa-server"
              fish  aasa-server completions fish > ~/.config/fish/completions/aasa-server.fish

            OPTIONS:
              --help   Show this help.

            EXIT STATUS: 0 printed, 2 usage error.

            """,
        spec: ArgumentSpec(positionalName: "SHELL"),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        guard arguments.positionals.count == 1, let shell = arguments.positionals.first,
            let script = CompletionScripts.script(for: shell, OptionTable(CommandLineTool.subcommands))
        else {
            return CommandLineTool.usageError("give one shell: bash, zsh or fish", console: console, usage: subcommand.help)
        }
        console.out(script)
        return ExitStatus.success
    }
}
