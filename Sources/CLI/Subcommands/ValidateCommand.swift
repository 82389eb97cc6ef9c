import AASA
import LinkStore
import Links
import Posix
import Server

enum ValidateCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "validate",
        abstract: "Check a config, an AASA file or an entitlements file against Apple's rules.",
        help: """
            OVERVIEW: Check a config, a hosted AASA file or an app's Associated Domains entitlement.

            Every finding has a rule id, a severity, the file with line:column, the JSON path and a fix.
            A config is checked whole: every site's generated or hosted document, all reported together —
            and, when its server.stateDirectory holds a link store, the stored short links a rule of the
            config hides (links.stored-shadowed).

            USAGE: aasa-server validate (--config FILE | --file AASA_FILE | --entitlements FILE) [options]

            Any FILE may be - for standard input.

            OPTIONS:
              --config FILE          The server config (JSON). With --entitlements: cross-check hosts and apps.
              --file AASA_FILE       An apple-app-site-association file, as you would host it — or Android's
                                     assetlinks.json (recognised by its top-level array or its name).
              --entitlements FILE    An .entitlements plist (as Xcode writes it) or one entry per line,
                                     e.g. applinks:example.com?mode=developer.
              --app APP              With --entitlements and --config: the app that must be listed on every host,
                                     as an app ID (TEAMID.BUNDLE) or an app name of the config (shop).
              --no-certificates      With --config: do not read certificate and key files (CI without the
                                     secrets); their declared "hosts" must still cover every site.
              --json                 Print {"errors", "warnings", "findings": [...]} on stdout.
              --strict               Treat warnings as failures (exit 1).
              --help                 Show this help.

            EXIT STATUS: 0 no errors (warnings allowed unless --strict), 1 errors, 2 usage error or unreadable file.

            EXAMPLES:
              aasa-server validate --config config/example.json
              aasa-server validate --file public/.well-known/apple-app-site-association --json
              curl -s https://example.com/.well-known/apple-app-site-association | aasa-server validate --file -
              aasa-server validate --config config/examples/https.json --no-certificates
              aasa-server validate --entitlements App/App.entitlements --config config/example.json \\
                  --app ABCDE12345.com.example.shop

            """,
        spec: ArgumentSpec(
            options: ["--config", "--file", "--entitlements", "--app"],
            flags: ["--json", "--strict", "--no-certificates"]
        ),
        run: run
    )

    /// `--file` reads files far over Apple's 128 KB, so the size finding can name the biggest parts.
    static let fileReadLimit = 16 << 20

    /// Stored short links a config rule hides, when the config's link store exists and can be read (validate
    /// never creates one).
    static func storedLinkFindings(_ loaded: Generation.Candidate) -> [Diagnostic] {
        guard let settings = loaded.config.config?.server else { return [] }
        if settings.linkStorePostgres == nil {
            guard let directory = settings.stateDirectory,
                Posix.fileExists(ConfigLoader.resolve(directory, relativeTo: loaded.configPath) + "/" + LinkDatabase.fileName)
            else { return [] }
        }
        guard let location = try? LinkStoreLocation.configured(settings, configPath: loaded.configPath),
            let links = try? LinkDatabase(location, create: false).list()
        else { return [] }
        return StoredLinkShadows.findings(loaded.config, storedLinks: links).inFile(loaded.configPath)
    }

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let config = arguments.value("--config")
        let file = arguments.value("--file")
        let entitlements = arguments.value("--entitlements")
        let usage = subcommand.help
        if config == nil && file == nil && entitlements == nil {
            return CommandLineTool.usageError("give --config, --file or --entitlements", console: console, usage: usage)
        }
        if file != nil && (config != nil || entitlements != nil) {
            return CommandLineTool.usageError("--file cannot be combined with --config or --entitlements", console: console, usage: usage)
        }
        if arguments.value("--app") != nil && (entitlements == nil || config == nil) {
            return CommandLineTool.usageError("--app needs both --entitlements and --config", console: console, usage: usage)
        }

        if [config, file, entitlements].count(where: { $0 == Files.standardInput }) > 1 {
            return CommandLineTool.usageError("only one input can be standard input (-)", console: console, usage: usage)
        }

        var findings: [Diagnostic] = []
        var isAssetLinks = false
        var sources: [String: [UInt8]] = [:]
        var loadedConfig: LoadedConfig?
        if let config {
            let certificates: CertificateSupply = arguments.has("--no-certificates") ? .declaredOnly : .files()
            guard let loaded = CommandLineTool.loadConfig(config, certificates: certificates, console: console) else {
                return ExitStatus.usage
            }
            loadedConfig = loaded.config
            sources.merge(loaded.sources) { first, _ in first }
            findings += loaded.diagnostics
            findings += storedLinkFindings(loaded)
        }
        var fileBytes: [UInt8]?
        if let file {
            switch Files.read(file, limit: fileReadLimit) {
            case .success(let read): fileBytes = read
            case .failure(let failure):
                guard let size = failure.size else {
                    console.err("error: cannot read \"\(file)\": \(failure.message)\n")
                    return ExitStatus.usage
                }
                // Too big to be worth parsing: the size is the finding, not a read error.
                findings += AASAValidator.validateSize(size).inFile(Files.displayName(file))
            }
        }
        if let file, let bytes = fileBytes {
            let name = Files.displayName(file)
            sources[name] = bytes
            // A top-level array (or the name) says it is Android's statement list, not an AASA file.
            isAssetLinks = AssetLinksDecoder.looksLikeStatementList(bytes) || file.hasSuffix("assetlinks.json")
            let fileFindings =
                isAssetLinks
                ? AssetLinksDecoder.validateFile(bytes).diagnostics.withoutCascades().inFile(name)
                : AASAValidator.validateFile(bytes).diagnostics.inFile(name)
            findings += fileFindings
            if !isAssetLinks && file.hasSuffix(".json") && !fileFindings.contains(where: { $0.rule == "file.is-config" }) {
                findings.append(
                    Diagnostic(
                        .warning,
                        "file.json-suffix",
                        "the file is named with a .json suffix; Apple fetches exactly "
                            + "/.well-known/apple-app-site-association (no extension), so serve it under that name",
                        file: file
                    )
                )
            }
        }
        if let entitlements {
            guard let bytes = Files.readArgument(entitlements, console: console) else { return ExitStatus.usage }
            sources[Files.displayName(entitlements)] = bytes
            let text = String(decoding: bytes, as: UTF8.self)
            var app = arguments.value("--app")
            if let given = app {
                switch AppArgument.resolve(given, option: "--app", config: loadedConfig) {
                case .success(let id): app = id
                case .failure(let error): return CommandLineTool.usageError(error.message, console: console, usage: subcommand.help)
                }
            }
            findings += EntitlementsValidator.validate(text, config: loadedConfig, app: app)
                .inFile(Files.displayName(entitlements))
        }

        findings = findings.sortedForDisplay()
        let strict = arguments.has("--strict")
        let failed = findings.hasErrors || (strict && findings.warningCount > 0)
        if arguments.has("--json") {
            console.outBytes(JSONWriter.bytes(DiagnosticPrinter.jsonReport(findings, strict: strict), pretty: true))
        } else {
            let printer = DiagnosticPrinter(colour: console.stderrIsTerminal, sources: sources)
            printer.print(findings, to: console)
            let subject =
                [config, file, entitlements].compactMap { $0 }.map(Files.displayName).joined(separator: ", ")
                + (isAssetLinks ? " (Android statement list)" : "")
            let verdict =
                findings.hasErrors ? "invalid" : failed ? "failed (--strict: warnings fail)" : "valid"
            // A config's size, in one line: a million hosts never print a line each.
            if let loadedConfig {
                let hosts = loadedConfig.sites.reduce(0) { $0 + $1.site.hosts.count }
                let included = Set(loadedConfig.sites.compactMap(\.definedIn)).count
                console.err(
                    "\(Files.displayName(config ?? "")): \(loadedConfig.sites.count) site\(loadedConfig.sites.count == 1 ? "" : "s"), "
                        + "\(hosts) host\(hosts == 1 ? "" : "s")"
                        + (included > 0 ? " (\(included) included file\(included == 1 ? "" : "s"))" : "") + "\n"
                )
            }
            console.err(
                "\(subject): \(verdict) — \(findings.errorCount) error\(findings.errorCount == 1 ? "" : "s"), "
                    + "\(findings.warningCount) warning\(findings.warningCount == 1 ? "" : "s")\n"
            )
        }
        return failed ? ExitStatus.failure : ExitStatus.success
    }
}
