import AASA
import Posix
import Server
import Synchronization
import TLS

/// Exit statuses, the same for every subcommand (README, docs/commands.md, `--help`).
public enum ExitStatus {
    /// Success: no errors (validate), output written (generate), every URL opens an app (match).
    public static let success: Int32 = 0
    /// Findings: errors in the input (validate, generate), or a URL that opens no app (match).
    public static let failure: Int32 = 1
    /// Usage error or unreadable input.
    public static let usage: Int32 = 2
}

/// The `aasa-server` command line: dispatch, help and version.
public enum CommandLineTool {
    public static let version = "0.1.0"

    struct Subcommand: Sendable {
        var name: String
        var abstract: String
        var help: String
        var spec: ArgumentSpec
        var run: @Sendable (ParsedArguments, any Console) -> Int32
    }

    static let subcommands: [Subcommand] = [
        ServeCommand.subcommand,
        InitCommand.subcommand,
        ValidateCommand.subcommand,
        GenerateCommand.subcommand,
        MatchCommand.subcommand,
        CheckCommand.subcommand,
        HealthcheckCommand.subcommand,
        StatusCommand.subcommand,
        CertificatesCommand.subcommand,
        LinksCommand.subcommand,
        DevCommand.subcommand,
        DevCertCommand.subcommand,
        CompletionsCommand.subcommand,
        ManPageCommand.subcommand,
    ]

    static var overview: String {
        var text = """
            OVERVIEW: Host, generate and check apple-app-site-association files for Universal Links.

            USAGE: aasa-server <subcommand> [options]

            SUBCOMMANDS:

            """
        for command in subcommands {
            text += "  " + command.name.padding(14) + command.abstract + "\n"
        }
        text += """

            OPTIONS:
              --help      Show help for the tool or, after a subcommand, for that subcommand.
              --version   Print the version.

            EXIT STATUS: 0 success, 1 findings (errors, or a URL that opens no app), 2 usage error.

            See 'aasa-server help <subcommand>' for details.

            """
        return text
    }

    /// Runs the tool with the process's arguments and exits with its status.
    public static func main() -> Never {
        Posix.exit(run(Array(CommandLine.arguments.dropFirst())))
    }

    /// Runs the tool with `arguments` (without the program name) and returns the exit status.
    public static func run(_ arguments: [String], console: any Console = StandardConsole()) -> Int32 {
        guard let first = arguments.first else {
            console.err(overview)
            return ExitStatus.usage
        }
        switch first {
        case "--help", "-h":
            console.out(overview)
            return ExitStatus.success
        case "--version":
            console.out("aasa-server \(version) (commit \(buildCommit); \(TLSLibrary.version))\n")
            return ExitStatus.success
        case "help":
            guard arguments.count > 1 else {
                console.out(overview)
                return ExitStatus.success
            }
            guard let command = subcommands.first(where: { $0.name == arguments[1] }) else {
                return usageError("unknown subcommand '\(arguments[1])'", console: console)
            }
            console.out(command.help)
            return ExitStatus.success
        default:
            break
        }
        guard let command = subcommands.first(where: { $0.name == first }) else {
            // An option where a subcommand belongs is compared with the options that stand alone.
            let candidates = first.hasPrefix("-") ? ["--version", "--help"] : subcommands.map(\.name) + ["help"]
            let suggestion = closestMatch(to: first, in: candidates)
            return usageError(
                (first.hasPrefix("-") ? "unknown option '\(first)'" : "unknown subcommand '\(first)'")
                    + (suggestion.map { "; did you mean '\($0)'?" } ?? ""),
                console: console
            )
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            console.out(command.help)
            return ExitStatus.success
        }
        do {
            let parsed = try ParsedArguments(rest, spec: command.spec)
            return command.run(parsed, console)
        } catch {
            return usageError(error.message, console: console, usage: command.help)
        }
    }

    /// One line saying what is wrong, then the usage lines.
    static func usageError(_ message: String, console: any Console, usage: String? = nil) -> Int32 {
        let usageText = usage ?? overview
        let usageLines = usageText.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { !$0.hasPrefix("USAGE:") }
            .prefix { !$0.isEmpty }
        console.err("error: \(message)\n" + usageLines.joined(separator: "\n") + "\nSee --help for more.\n")
        return ExitStatus.usage
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

extension CommandLineTool {
    /// A subcommand's config, read the one way every subcommand reads it (``ConfigReader`` then
    /// ``Generation/load(_:reusing:)``): `-` is standard input (findings then name `<stdin>`),
    /// ``BuiltInConfig/name`` the compiled-in example; a config file that cannot be read is said on stderr
    /// and gives nil (a usage error).
    static func loadConfig(
        _ path: String,
        certificates: CertificateSupply,
        options: GenerationOptions = GenerationOptions(),
        console: any Console
    ) -> Generation.Candidate? {
        var contents: [UInt8]?
        if path == BuiltInConfig.name { contents = BuiltInConfig.bytes }
        if path == Files.standardInput || (path != BuiltInConfig.name && Files.pipeKind(path) != nil) {
            guard let bytes = Files.readArgument(path, console: console, limit: Posix.ReadLimit.config) else { return nil }
            contents = bytes
        }
        switch ConfigReader.inputs(path: Files.displayName(path), contents: contents, certificates: certificates, options: options) {
        case .success(let inputs): return Generation.load(inputs)
        case .failure(let error):
            console.err("error: cannot read \"\(path)\": \(error.message)\n")
            return nil
        }
    }
}
