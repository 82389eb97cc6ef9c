import AASA
import Posix
import Server

enum InitCommand {
    static let defaultOutput = "aasa-server.json"

    static let subcommand = CommandLineTool.Subcommand(
        name: "init",
        abstract: "Write a commented starter config for your hosts and apps (never over an existing file).",
        help: """
            OVERVIEW: Write a commented starter config for your hosts and apps.

            The answers come as flags (nothing is asked interactively, so it runs the same in CI). The config
            is validated before it is written: nothing is written when it has errors. An existing file is
            never replaced.

            USAGE: aasa-server init --host HOST... --app [NAME=]TEAMID.BUNDLE... [--path PATTERN]...
                                    [--exclude PATTERN]... [--webcredentials] [--output FILE]

            OPTIONS:
              --host HOST       A host that serves the file (example.com, www.example.com: each needs its
                                own); repeatable, at least one.
              --app [NAME=]ID   An app ID (ABCDE12345.com.example.shop), optionally named (shop=…); the name
                                defaults to the bundle ID's last part. Repeatable, at least one.
              --path PATTERN    A path that opens the app, in AASA component syntax (/product/*); repeatable
                                (default: /*, every path).
              --exclude PATTERN
                                A path that never opens the app (/admin/*), checked first; repeatable.
              --webcredentials  Also list the apps for shared web credentials (password autofill).
              --output FILE     Where to write (default: \(defaultOutput)); - prints it instead.
              --help            Show this help.

            EXAMPLE:
              aasa-server init --host example.com --host www.example.com --app shop=ABCDE12345.com.example.shop \\
                  --path '/product/*' --exclude '/admin/*'

            EXIT STATUS: 0 written, 1 the config would have errors or FILE exists, 2 usage error.

            """,
        spec: ArgumentSpec(
            options: ["--output"],
            repeatableOptions: ["--host", "--app", "--path", "--exclude"],
            flags: ["--webcredentials"]
        ),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        let hosts = arguments.all("--host")
        guard !hosts.isEmpty else { return CommandLineTool.usageError("give at least one --host HOST", console: console, usage: usage) }
        var apps: [InitTemplate.App] = []
        for text in arguments.all("--app") {
            guard let app = InitTemplate.app(text) else {
                return CommandLineTool.usageError(
                    "--app \(text): give an app ID, TEAMID.BUNDLE (ABCDE12345.com.example.shop), optionally as NAME=TEAMID.BUNDLE",
                    console: console,
                    usage: usage
                )
            }
            apps.append(app)
        }
        guard !apps.isEmpty else {
            return CommandLineTool.usageError("give at least one --app TEAMID.BUNDLE", console: console, usage: usage)
        }
        let paths = arguments.all("--path")
        let template = InitTemplate(
            hosts: hosts,
            apps: apps,
            paths: paths.isEmpty ? ["/*"] : paths,
            excluded: arguments.all("--exclude"),
            webCredentials: arguments.has("--webcredentials")
        )
        let output = arguments.value("--output") ?? defaultOutput
        let bytes = Array(template.text.utf8)
        // The validator decides, as it will for every later edit: a malformed app ID or host is said in its words.
        let name = output == Files.standardInput ? "(the config init prints)" : output
        switch ConfigReader.inputs(path: name, contents: bytes, certificates: .notRead) {
        case .success(let inputs):
            let candidate = Generation.load(inputs)
            let findings = candidate.diagnostics.sortedForDisplay()
            if candidate.diagnostics.hasErrors {
                DiagnosticPrinter(colour: console.stderrIsTerminal, sources: [:]).print(findings, to: console)
                console.err("error: not written: the config would have \(candidate.diagnostics.errorCount) error(s); fix the flags above\n")
                return ExitStatus.failure
            }
        case .failure(let error):
            console.err("error: \(error.message)\n")
            return ExitStatus.failure
        }
        if output == Files.standardInput {
            console.out(template.text)
            return ExitStatus.success
        }
        do {
            guard try Posix.createExclusively(bytes, at: output, mode: 0o644) else {
                console.err("error: \(output) exists; not replaced (choose another --output, or remove it first)\n")
                return ExitStatus.failure
            }
        } catch {
            console.err("error: cannot write \(output): \(error)\n")
            return ExitStatus.failure
        }
        console.err(
            """
            wrote \(output): \(hosts.count) host\(hosts.count == 1 ? "" : "s"), \(apps.count) app\(apps.count == 1 ? "" : "s")
            next:
              aasa-server validate --config \(output)
              aasa-server match --config \(output) https://\(hosts[0])\(template.paths[0].split(separator: "*", omittingEmptySubsequences: false).joined(separator: "example"))
              aasa-server serve --config \(output)

            """
        )
        return ExitStatus.success
    }
}
