import AASA
import ACME
import Posix
import Server

enum ServeCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "serve",
        abstract: "Serve the AASA files of every site in the config over HTTP and HTTPS.",
        help: """
            OVERVIEW: Serve /.well-known/apple-app-site-association and /apple-app-site-association per Host.

            GET and HEAD on those paths always answer 200 application/json (never a redirect, never 304),
            built once when the config loads. Unknown hosts get the config's unknownHost answer. Listeners
            with "tls": true serve HTTPS with the certificates in server.certificates (chosen by SNI), and
            with server.acme the server obtains and renews the missing ones itself from an ACME CA such as
            Let's Encrypt (see `aasa-server certificates`).

            The config and every file it references are watched and reloaded on change; SIGHUP and
            POST /reload on the admin listener reload too. A config with errors never replaces a good one.
            SIGTERM or SIGINT stops accepting, finishes in-flight requests and exits (server.timeouts.drain).

            USAGE: aasa-server serve [--config FILE] [--listen ADDR:PORT]... [--listen-tls ADDR:PORT]... [--admin ADDR:PORT|off]
                                     [--check-config]

            OPTIONS:
              --config FILE         The config (default: the built-in example, config/example.json compiled in:
                                    it serves example.com and www.example.com, to try the server with).
              --listen ADDR:PORT    Listen here (plain HTTP) instead of every listener of the config's server.listen,
                                    TLS ones included; repeatable. IPv6 in brackets: [::1]:8080. Port 0 picks a
                                    free port.
              --listen-tls ADDR:PORT  Listen here with TLS (certificates from server.certificates); replaces the
                                    config's listeners as --listen does, and combines with it; repeatable.
              --admin ADDR:PORT     The admin listener (/healthz, /readyz, /metrics, /status, /console), or "off".
              --check-config        Validate the config, print the result and exit (like nginx -t).
              --help                Show this help.

            OUTPUT: lifecycle lines on stderr ("aasa-server: listening on http://127.0.0.1:8080"); one JSON
            access-log line per request on stdout unless server.accessLog is false.

            EXIT STATUS: 0 after a graceful shutdown (or a valid --check-config), 1 when the config has
            errors or a listener cannot be opened, 2 usage error.

            """,
        spec: ArgumentSpec(options: ["--config", "--admin"], repeatableOptions: ["--listen", "--listen-tls"], flags: ["--check-config"]),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        let configPath = arguments.value("--config") ?? BuiltInConfig.name
        var options = HTTPServer.Options()
        if !arguments.all("--listen").isEmpty || !arguments.all("--listen-tls").isEmpty {
            var listeners: [ServerSettings.Listener] = []
            for (option, tls) in [("--listen", false), ("--listen-tls", true)] {
                for text in arguments.all(option) {
                    switch ServerSettings.parseListenAddress(text) {
                    case .success(var listener):
                        listener.tls = tls
                        listeners.append(listener)
                    case .failure(let error):
                        return CommandLineTool.usageError("\(option) \(error.message)", console: console, usage: usage)
                    }
                }
            }
            options.listen = listeners
        }
        if let admin = arguments.value("--admin") {
            if admin == "off" {
                options.admin = .some(nil)
            } else {
                switch ServerSettings.parseListenAddress(admin) {
                case .success(let listener): options.admin = .some(listener)
                case .failure(let error): return CommandLineTool.usageError("--admin \(error.message)", console: console, usage: usage)
                }
            }
        }

        if let kind = Files.pipeKind(configPath), !arguments.has("--check-config") {
            return CommandLineTool.usageError(
                "--config \(configPath) is \(kind), not a regular file: the server reads its config again at every reload, so give a file",
                console: console,
                usage: usage
            )
        }
        // --check-config quotes source lines; the server keeps only what serving needs.
        var loading = GenerationOptions(servingOnly: !arguments.has("--check-config"), adjustSettings: options.apply)
        if loading.servingOnly { loading.compiledSites = CompiledSitesStore(identity: "\(CommandLineTool.version) \(buildCommit)") }
        let generationOptions = loading
        // Certificates from ACME join the TLS contexts through this slot once the manager exists.
        let obtained = CertificateManagerSlot()
        let certificates = CertificateSupply.files(obtained: obtained)
        guard let loaded = CommandLineTool.loadConfig(configPath, certificates: certificates, options: generationOptions, console: console)
        else { return ExitStatus.usage }
        let findings = loaded.diagnostics.sortedForDisplay()
        let errorCount = loaded.diagnostics.errorCount
        if arguments.has("--check-config") {
            // A person at a terminal asked: the findings with their source lines, as validate shows them.
            DiagnosticPrinter(colour: console.stderrIsTerminal, sources: loaded.sources).print(findings, to: console)
        } else {
            // The server's log: one line per finding, in the configured format, for journald and log shippers.
            Log.configure(loaded.settings.logFormat)
            for finding in findings { Log.finding(finding) }
        }
        if loaded.diagnostics.hasErrors {
            let summary = "\(configPath): \(errorCount) error\(errorCount == 1 ? "" : "s"); not serving"
            if arguments.has("--check-config") { console.err(summary + "\n") } else { Log.error(summary) }
            return ExitStatus.failure
        }
        if arguments.has("--check-config") {
            let hosts = loaded.config.sites.reduce(0) { $0 + $1.site.hosts.count }
            console.err(
                "\(configPath): ok — \(loaded.config.sites.count) site(s), \(hosts) host(s), "
                    + "\(loaded.diagnostics.warningCount) warning(s)\n"
            )
            return ExitStatus.success
        }
        var manager: CertificateManager?
        if let acme = loaded.settings.acme {
            do {
                manager = try ACMESetup.manager(acme, settings: loaded.settings, configPath: configPath)
            } catch {
                Log.error("\(error)")
                return ExitStatus.failure
            }
            if let manager { obtained.set(manager) }
        }
        if configPath == BuiltInConfig.name {
            Log.info(
                "no --config given: serving the built-in example config (\(BuiltInConfig.hosts.joined(separator: ", "))); "
                    + "write your own with aasa-server init --host HOST --app TEAMID.BUNDLE, then serve it with --config FILE"
            )
        }
        // Nothing here may keep the first generation alive: the first reload must be able to free it.
        if loaded.config.restoredIncludedFiles > 0 {
            Log.info(
                "\(loaded.config.restoredIncludedFiles) included files restored from the compiled-sites snapshot, "
                    + "\(loaded.config.parsedIncludedFiles) built from their bytes"
            )
        }
        let hostedDocuments = loaded.config.hostedDocuments
        if !hostedDocuments.restored.isEmpty {
            Log.info(
                "hosted documents taken from the compiled-sites snapshot (the same bytes, checked and compressed before): "
                    + "\(hostedDocuments.restored.count); checked from their bytes: \(hostedDocuments.checked.count)"
            )
        }
        // Written once the server serves and the documents' gzip forms are made: the start does not share the
        // CPU with it, and it keeps the forms.
        generationOptions.compiledSites?.keep(loaded.config, configPath: configPath)
        guard case .success(let first) = Generation.first(consume loaded) else { return ExitStatus.failure }
        let builtIn = configPath == BuiltInConfig.name ? BuiltInConfig.bytes : nil
        return HTTPServer.run(
            initial: consume first,
            recording: FetchRecording(configPath: configPath),
            acme: manager,
            readInputs: {
                ConfigReader.inputs(path: configPath, contents: builtIn, certificates: certificates, options: generationOptions)
            },
            onCompressed: { generationOptions.compiledSites?.writeWaiting() }
        )
    }
}
