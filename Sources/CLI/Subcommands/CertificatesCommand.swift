import AASA
import ACME
import HTTP1
import Posix
import Server
import Support

/// `certificates`: each host's certificate — from a file, obtained by ACME, or pending — with its issuer,
/// expiry, next renewal and the last error, read from the config, its certificate files and the ACME
/// storage (so it answers for every replica sharing that storage, with no server running).
enum CertificatesCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "certificates",
        abstract: "List each host's certificate: source (file, ACME, pending), issuer, expiry, next renewal, last error.",
        help: """
            OVERVIEW: For every host of the config: where its certificate comes from — a file of
            server.certificates, ACME (obtained and stored in acme.storage, the certificate file itself read),
            pending (ACME has nothing stored yet, or another replica's order is in progress), damaged (stored,
            but no usable certificate and key), or on demand (not requested yet) — with the issuer, when it
            expires, when ACME renews it next and the last error an order met (from any replica sharing the
            storage). Hosts obtained on demand (customer domains under
            a wildcard site) are listed from the storage.

            USAGE: aasa-server certificates [--config FILE] [--json]
                   aasa-server certificates retry HOST... [--admin HOST:PORT] [--token-file FILE]

            retry HOST... asks a running server (its admin listener) to order HOST now, its backoff forgotten —
            after fixing DNS or a firewall, say. The name is decided as any order is (served by the config,
            ask consulted for on-demand names).

            OPTIONS:
              --config FILE   The config (default: the built-in example, config/example.json compiled in).
              --admin HOST:PORT
                              With retry: the server's admin listener (default 127.0.0.1:9090).
              --token-file FILE
                              With retry: the admin token (adminTokenFile), sent as Authorization: Bearer.
              --json          {"certificates": [{"host", "source", "issuer", "notAfter", "nextRenewal", "lastError",
                              "file", "valid"}]}.
              --help          Show this help.

            EXIT STATUS: 0 every host has a certificate that has not expired (or is on demand and not requested
            yet), 1 some host has none that works (pending, damaged, uncovered or expired), 2 usage error or an
            unreadable config.

            """,
        spec: ArgumentSpec(options: ["--config", "--admin", "--token-file"], flags: ["--json"], positionalName: "retry HOST"),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        if !arguments.positionals.isEmpty { return retry(arguments, console) }
        let configPath = arguments.value("--config") ?? BuiltInConfig.name
        guard let loaded = CommandLineTool.loadConfig(configPath, certificates: .notRead, console: console) else { return ExitStatus.usage }
        guard let config = loaded.config.config else {
            for finding in loaded.diagnostics.sortedForDisplay() where finding.severity == .error { console.err("\(finding)\n") }
            return ExitStatus.usage
        }
        let now = Int(Posix.unixTime())
        let rows = CertificateReport.rows(config: config, sites: loaded.config.sites, configPath: configPath)
        console.out(arguments.has("--json") ? CertificateReport.json(rows, now: now) : CertificateReport.text(rows, now: now))
        return rows.contains { $0.needsAttention(at: now) } ? ExitStatus.failure : ExitStatus.success
    }

    /// `certificates retry HOST...`: POST /certificates/retry/HOST to the admin listener, per host.
    static func retry(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        guard arguments.positionals.first == "retry", arguments.positionals.count >= 2 else {
            return CommandLineTool.usageError("write: certificates retry HOST...", console: console, usage: usage)
        }
        var admin = ServerSettings.Listener(address: "127.0.0.1", port: 9090)
        if let text = arguments.value("--admin") {
            switch ServerSettings.parseListenAddress(text) {
            case .success(let listener): admin = listener
            case .failure(let error): return CommandLineTool.usageError("--admin \(error.message)", console: console, usage: usage)
            }
        }
        let token: String?
        switch HealthcheckCommand.token(arguments) {
        case .success(let read): token = read
        case .failure(let error): return CommandLineTool.usageError(error.message, console: console, usage: usage)
        }
        let address = HealthcheckCommand.reachable(admin)
        var failed = false
        for host in arguments.positionals.dropFirst() {
            let answer = HealthcheckCommand.get(
                address: address,
                port: admin.port,
                path: "/certificates/retry/\(host)",
                timeout: 5,
                bearerToken: token,
                method: "POST"
            )
            switch answer {
            case .success(let response) where response.status == 202:
                let body = JSONParser.parse(response.body).root
                if let name = body?["queued"]?.stringValue {
                    console.out("\(host): an order for \(name) is queued now\n")
                } else {
                    console.out("\(host): an order for \(body?["alreadyQueued"]?.stringValue ?? host) is already queued or running\n")
                }
            case .success(let response):
                let reason = JSONParser.parse(response.body).root?["error"]?.stringValue ?? String(decoding: response.body, as: UTF8.self)
                console.err("\(host): \(response.status) \(reason.trimmingWhitespace())\n")
                failed = true
            case .failure(let problem):
                console.err("\(host): the admin listener \(admin.description): \(problem)\n")
                failed = true
            }
        }
        return failed ? ExitStatus.failure : ExitStatus.success
    }
}
