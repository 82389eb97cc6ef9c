import AASA
import Posix
import Server
import Synchronization
import TLS

enum ServeCommand {
    static let defaultConfig = "config/example.json"

    static let subcommand = CommandLineTool.Subcommand(
        name: "serve",
        abstract: "Serve the AASA files of every site in the config over HTTP and HTTPS.",
        help: """
            OVERVIEW: Serve /.well-known/apple-app-site-association and /apple-app-site-association per Host.

            GET and HEAD on those paths always answer 200 application/json (never a redirect, never 304),
            built once when the config loads. Unknown hosts get the config's unknownHost answer. Listeners
            with "tls": true serve HTTPS with the certificates in server.certificates (chosen by SNI).

            The config and every file it references are watched and reloaded on change; SIGHUP and
            POST /reload on the admin listener reload too. A config with errors never replaces a good one.
            SIGTERM or SIGINT stops accepting, finishes in-flight requests and exits (server.timeouts.drain).

            USAGE: aasa-server serve [--config FILE] [--listen ADDR:PORT]... [--admin ADDR:PORT|off] [--check-config]

            OPTIONS:
              --config FILE         The config (default: \(defaultConfig)).
              --listen ADDR:PORT    Listen here instead of the config's server.listen; repeatable.
                                    IPv6 in brackets: [::1]:8080. Port 0 picks a free port.
              --admin ADDR:PORT     The admin listener (/healthz, /readyz, /metrics), or "off".
              --check-config        Validate the config, print the result and exit (like nginx -t).
              --help                Show this help.

            OUTPUT: lifecycle lines on stderr ("aasa-server: listening on http://127.0.0.1:8080"); one JSON
            access-log line per request on stdout unless server.accessLog is false.

            EXIT STATUS: 0 after a graceful shutdown (or a valid --check-config), 1 when the config has
            errors or a listener cannot be opened, 2 usage error.

            """,
        spec: ArgumentSpec(options: ["--config", "--admin"], repeatableOptions: ["--listen"], flags: ["--check-config"]),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        let configPath = arguments.value("--config") ?? defaultConfig
        var options = HTTPServer.Options()
        if !arguments.all("--listen").isEmpty {
            var listeners: [ServerSettings.Listener] = []
            for text in arguments.all("--listen") {
                switch ServerSettings.parseListenAddress(text) {
                case .success(let listener): listeners.append(listener)
                case .failure(let error): return CommandLineTool.usageError("--listen \(error.message)", console: console, usage: usage)
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
        if arguments.value("--config") == nil && !Files.exists(configPath) {
            console.err("error: no --config given and \(defaultConfig) does not exist here; run from the repository root or pass --config FILE\n")
            return ExitStatus.usage
        }

        let clock = ContinuousClock()
        let start = clock.now
        guard let (loaded, tls, diagnostics, sources) = ConfigFiles.loadServing(configPath, console: console, now: Int(Posix.unixTime()))
        else { return ExitStatus.usage }
        let elapsed = start.duration(to: clock.now)
        let printer = DiagnosticPrinter(colour: console.stderrIsTerminal, sources: sources)
        printer.print(diagnostics.sortedForDisplay(), to: console)
        if diagnostics.hasErrors {
            console.err("\(configPath): \(diagnostics.errorCount) error(s); not serving\n")
            return ExitStatus.failure
        }
        if arguments.has("--check-config") {
            let hosts = loaded.sites.reduce(0) { $0 + $1.site.hosts.count }
            console.err(
                "\(configPath): ok — \(loaded.sites.count) site(s), \(hosts) host(s), "
                    + "\(loaded.diagnostics.warningCount) warning(s)\n"
            )
            return ExitStatus.success
        }
        return HTTPServer.run(
            initial: loaded,
            tls: tls,
            loadMicroseconds: microseconds(elapsed),
            options: options,
            watchedFiles: watchedFiles(configPath, loaded),
            reload: { [lastLoaded = LastLoadedConfig(loaded)] in reloadConfig(configPath, reusing: lastLoaded) }
        )
    }

    /// The config, every hosted document and every certificate and key: what a reload reads.
    static func watchedFiles(_ configPath: String, _ loaded: LoadedConfig) -> [String] {
        var files = [configPath]
        files += loaded.sites.compactMap(\.file)
        for certificate in loaded.config?.server.certificates ?? [] {
            files.append(ConfigLoader.resolve(certificate.certificate, relativeTo: configPath))
            files.append(ConfigLoader.resolve(certificate.key, relativeTo: configPath))
        }
        var seen = Set<String>()
        return files.filter { seen.insert($0).inserted }
    }

    static func microseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1_000_000 + Int(duration.components.attoseconds / 1_000_000_000_000)
    }

    /// The config the running snapshot was built from: a reload takes over every site whose bytes it
    /// did not change (see `ConfigLoader.load(configBytes:configPath:readFile:reusing:)`).
    final class LastLoadedConfig: Sendable {
        let config: Mutex<LoadedConfig>
        init(_ config: LoadedConfig) { self.config = Mutex(config) }
    }

    /// Re-reads the config for a reload: the new config, or the error lines that keep the old one serving.
    static func reloadConfig(_ path: String, reusing lastLoaded: LastLoadedConfig) -> HTTPServer.LoadResult {
        let clock = ContinuousClock()
        let start = clock.now
        guard case .success(let bytes) = Files.read(path) else {
            return .rejected(["cannot read \(path): \(Files.readErrorMessage(path))"])
        }
        let previous = lastLoaded.config.withLock { $0 }
        let loaded = ConfigLoader.load(
            configBytes: bytes,
            configPath: path,
            readFile: { Files.read($0) },
            reusing: previous,
            parallel: { Posix.parallelFor($0, $1) }
        )
        var diagnostics = loaded.diagnostics
        var contexts: TLSContexts?
        if let settings = loaded.config?.server, !loaded.hasErrors {
            let tls = TLSSetup.load(settings, configPath: path, now: Int(Posix.unixTime()))
            diagnostics += tls.diagnostics
            contexts = tls.contexts
        }
        let errors = diagnostics.filter { $0.severity == .error }
        if !errors.isEmpty {
            return .rejected(errors.sortedForDisplay().prefix(10).map(\.description))
        }
        let replaced = lastLoaded.config.withLock { current in
            defer { current = loaded }
            return current
        }
        return .loaded(
            loaded,
            tls: contexts,
            microseconds: microseconds(start.duration(to: clock.now)),
            files: watchedFiles(path, loaded),
            replaced: replaced
        )
    }
}
