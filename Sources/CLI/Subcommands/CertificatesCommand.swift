import AASA
import ACME
import Posix
import Server

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

            OPTIONS:
              --config FILE   The config (default: \(ServeCommand.defaultConfig)).
              --json          {"certificates": [{"host", "source", "issuer", "notAfter", "nextRenewal", "lastError",
                              "file", "valid"}]}.
              --help          Show this help.

            EXIT STATUS: 0 every host has a certificate that has not expired (or is on demand and not requested
            yet), 1 some host has none that works (pending, damaged, uncovered or expired), 2 usage error or an
            unreadable config.

            """,
        spec: ArgumentSpec(options: ["--config"], flags: ["--json"]),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let configPath = arguments.value("--config") ?? ServeCommand.defaultConfig
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
}
