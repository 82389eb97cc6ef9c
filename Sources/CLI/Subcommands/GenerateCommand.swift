import AASA
import Server

enum GenerateCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "generate",
        abstract: "Print the exact AASA bytes the server serves for a host, or write one file per host.",
        help: """
            OVERVIEW: Print the exact bytes the server serves for a host, or write one file per host.

            Output is canonical JSON (stable key order, UTF-8, no BOM): the same config always gives the same
            bytes. A site that hosts a verbatim file prints that file unchanged. On a terminal a newline follows
            the document (so the prompt starts on its own line); redirected or piped, the output is exactly the
            served bytes. Nothing is written when the config has errors, and an output path never replaces the
            config or a file it references.

            USAGE: aasa-server generate --config FILE (--host HOST [--android] [--allow-unknown] | --all --out DIR [--list])
                                        [--pretty]

            OPTIONS:
              --config FILE   The server config (JSON); - reads it from standard input.
              --host HOST     Print the document for HOST on stdout (as a Host header: case, port and a
                              trailing dot are ignored).
              --android       With --host: print the host's assetlinks.json instead (exit 1 when it has none).
              --allow-unknown
                              With --host: a host no site serves prints the document the server answers it
                              with (unknownHost "empty") and exits 0; without it, exit 1.
              --all           Write every site's documents, one per host (assetlinks.json too, where a site
                              has Android apps).
              --list          With --all: print each file written (by default only a summary, so a
                              million hosts do not print a million lines).
              --out DIR       With --all: writes DIR/<host>/.well-known/apple-app-site-association; a
                              wildcard host *.example.com is written under DIR/_wildcard.example.com.
              --pretty        Indent the JSON for reading (the server serves the compact form).
              --help          Show this help.

            EXIT STATUS: 0 written, 1 the config has errors, or no site serves HOST (without --allow-unknown), or
            HOST gets no document, 2 usage error.

            """,
        spec: ArgumentSpec(
            options: ["--config", "--host", "--out"],
            flags: ["--all", "--pretty", "--android", "--list", "--allow-unknown"]
        ),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        guard let configPath = arguments.value("--config") else {
            return CommandLineTool.usageError("--config is required", console: console, usage: usage)
        }
        let host = arguments.value("--host")
        let all = arguments.has("--all")
        let out = arguments.value("--out")
        if (host == nil) == !all {
            return CommandLineTool.usageError("give either --host HOST or --all --out DIR", console: console, usage: usage)
        }
        if all && out == nil {
            return CommandLineTool.usageError("--all needs --out DIR", console: console, usage: usage)
        }
        if out != nil && !all {
            return CommandLineTool.usageError("--out is used with --all", console: console, usage: usage)
        }
        guard let candidate = CommandLineTool.loadConfig(configPath, certificates: .notRead, console: console) else {
            return ExitStatus.usage
        }
        let (loaded, sources) = (candidate.config, candidate.sources)
        let printer = DiagnosticPrinter(colour: console.stderrIsTerminal, sources: sources)
        // For one host, only what concerns it: its site's findings and the config-wide ones.
        var shown = loaded.diagnostics
        if let host {
            // A host no site serves still sees only the config-wide findings, never every site's.
            let site = loaded.site(forHost: host)
            shown = shown.filter { concerns($0, site: site, configPath: Files.displayName(configPath)) }
        }
        printer.print(shown.sortedForDisplay(), to: console)
        if loaded.hasErrors {
            let elsewhere = loaded.diagnostics.errorCount - shown.errorCount
            if elsewhere > 0 {
                console.err(
                    "\(Files.displayName(configPath)): \(elsewhere) error\(elsewhere == 1 ? "" : "s") in other sites "
                        + "(aasa-server validate --config lists them); the server would not load this config, so nothing is generated\n"
                )
            } else {
                let count = loaded.diagnostics.errorCount
                console.err("\(Files.displayName(configPath)): \(count) error\(count == 1 ? "" : "s"); nothing generated\n")
            }
            return ExitStatus.failure
        }
        let pretty = arguments.has("--pretty")

        if let host, arguments.has("--android") {
            guard let assetLinks = loaded.site(forHost: host)?.assetLinks else {
                console.err("error: no site for \"\(host)\" has Android apps: the server answers /.well-known/assetlinks.json with 404\n")
                return ExitStatus.failure
            }
            printDocument(pretty ? assetLinks.prettyBytes() : assetLinks.bytes, console)
            return ExitStatus.success
        }
        if arguments.has("--android") {
            return CommandLineTool.usageError(
                "--android is used with --host (--all writes assetlinks.json anyway)",
                console: console,
                usage: usage
            )
        }
        if let host {
            if let site = loaded.site(forHost: host), site.servesApple {
                printDocument(pretty ? site.prettyBytes() : site.bytes, console)
                return ExitStatus.success
            }
            if loaded.config?.unknownHost == .notFound {
                console.err("error: no site serves Apple apps for \"\(host)\", and unknownHost is \"404\": the server answers 404\n")
                return ExitStatus.failure
            }
            let androidOnly = loaded.site(forHost: host) != nil
            // A typo in a deploy script must not publish an empty document with exit 0.
            if !androidOnly && !arguments.has("--allow-unknown") {
                let hosts = loaded.sites.flatMap { $0.site.hosts.map(\.value.description) }
                let suggestion = closestMatch(to: host.lowercased(), in: hosts).map { " — did you mean \"\($0)\"?" } ?? ""
                console.err(
                    "error: no site serves \"\(host)\"\(suggestion); the server would answer it with the unknownHost \"empty\" document. "
                        + "Pass --allow-unknown to print that document anyway\n"
                )
                return ExitStatus.failure
            }
            console.err(
                androidOnly
                    ? "warning: \"\(host)\" has only Android apps (see --android); its AASA paths answer with the unknownHost \"empty\" document\n"
                    : "warning: no site serves \"\(host)\"; the server answers with the unknownHost \"empty\" document\n"
            )
            printDocument(pretty ? AASARenderer.bytes(.empty, pretty: true) : LoadedConfig.emptyDocumentBytes, console)
            return ExitStatus.success
        }

        guard let out else { return ExitStatus.usage }
        // Never replace what the user wrote: the config and every file it references are off limits.
        var protected = Set([Files.canonical(configPath)])
        for site in loaded.sites {
            if let file = site.file { protected.insert(Files.canonical(file)) }
            if let file = site.assetLinks?.file { protected.insert(Files.canonical(file)) }
        }
        var written = 0
        for site in loaded.sites {
            for host in site.site.hosts {
                let directory = out + "/" + directoryName(for: host.value.description) + "/.well-known/"
                var documents: [(String, [UInt8])] = []
                if site.servesApple { documents.append(("apple-app-site-association", pretty ? site.prettyBytes() : site.bytes)) }
                if let assetLinks = site.assetLinks {
                    documents.append(("assetlinks.json", pretty ? assetLinks.prettyBytes() : assetLinks.bytes))
                }
                for (name, bytes) in documents {
                    let target = directory + name
                    if protected.contains(Files.canonical(target)) {
                        console.err("error: refusing to write \(target): it is the config or a file the config uses\n")
                        return ExitStatus.failure
                    }
                    do {
                        try Files.writeAtomically(bytes, to: target)
                        if arguments.has("--list") { console.out(target + "\n") }
                        written += 1
                    } catch {
                        console.err("error: cannot write \(target): \(error)\n")
                        return ExitStatus.usage
                    }
                }
            }
        }
        let hostCount = loaded.sites.reduce(0) { $0 + $1.site.hosts.count }
        console.err(
            "wrote \(written) file\(written == 1 ? "" : "s") for \(hostCount) host\(hostCount == 1 ? "" : "s") of \(loaded.sites.count) site\(loaded.sites.count == 1 ? "" : "s") under \(out)\n"
        )
        if loaded.sites.contains(where: { $0.site.hosts.contains { $0.value.isWildcard } }) {
            console.err(
                "note: wildcard hosts are written as _wildcard.<domain> (a directory named \"*\" breaks shells and "
                    + "servers); serve that file for every subdomain, e.g. nginx: server_name *.<domain>; root DIR/_wildcard.<domain>;\n"
            )
        }
        return ExitStatus.success
    }

    /// The exact bytes the server sends; on a terminal a newline follows when they do not end with one, so
    /// the prompt starts on a line of its own (redirected or piped, the bytes are exactly the served ones).
    static func printDocument(_ bytes: [UInt8], _ console: any Console) {
        console.outBytes(bytes)
        if console.stdoutIsInteractive && bytes.last != 0x0A { console.out("\n") }
    }

    /// The directory `--all` writes a host's file under: the host itself, or `_wildcard.<domain>` for
    /// `*.<domain>`.
    static func directoryName(for host: String) -> String {
        host.hasPrefix("*.") ? "_wildcard." + host.dropFirst(2) : host
    }

    /// Whether a finding is about `site` (its part of the config or its hosted file) or the config as a
    /// whole (anything outside "sites").
    static func concerns(_ finding: Diagnostic, site: LoadedSite?, configPath: String) -> Bool {
        if let file = site?.file, finding.file == file { return true }
        if let file = site?.assetLinks?.file, finding.file == file { return true }
        if let included = site?.definedIn, finding.file == included, let site, let path = finding.path {
            let sitePath = site.site.origin.path.description
            return path == sitePath || path.hasPrefix(sitePath + ".") || path.hasPrefix(sitePath + "[")
        }
        guard finding.file == nil || finding.file == configPath else { return false }
        guard let path = finding.path, path.hasPrefix("$.sites[") else { return true }
        guard let site else { return false }
        let sitePath = site.site.origin.path.description
        return path == sitePath || path.hasPrefix(sitePath + ".") || path.hasPrefix(sitePath + "[")
    }
}
