import AASA
import ACME
import Posix
import Server
import TLS

/// `certificates`: each host's certificate — from a file, obtained by ACME, or pending — with its issuer,
/// expiry, next renewal and the last error, read from the config, its certificate files and the ACME
/// storage (so it answers for every replica sharing that storage, with no server running).
enum CertificatesCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "certificates",
        abstract: "List each host's certificate: source (file, ACME, pending), issuer, expiry, next renewal, last error.",
        help: """
            OVERVIEW: For every host of the config: where its certificate comes from — a file of
            server.certificates, ACME (obtained and stored in acme.storage), or pending (ACME has nothing
            stored yet) — with the issuer, when it expires, when ACME renews it next and the last error an
            order met (from any replica sharing the storage). Hosts obtained on demand (customer domains under
            a wildcard site) are listed from the storage.

            USAGE: aasa-server certificates [--config FILE] [--json]

            OPTIONS:
              --config FILE   The config (default: \(ServeCommand.defaultConfig)).
              --json          {"certificates": [{"host", "source", "issuer", "notAfter", "nextRenewal", "lastError",
                              "file", "valid"}]}.
              --help          Show this help.

            EXIT STATUS: 0 every host has a certificate that has not expired, 1 some host has none (pending,
            uncovered or expired), 2 usage error or an unreadable config.

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
        let rows = self.rows(config: config, sites: loaded.config.sites, configPath: configPath, now: now)
        console.out(arguments.has("--json") ? CertificateReport.json(rows, now: now) : CertificateReport.text(rows, now: now))
        return rows.allSatisfy { $0.isValid(at: now) } ? ExitStatus.success : ExitStatus.failure
    }

    static func rows(config: Config, sites: SiteList, configPath: String, now: Int) -> [CertificateRow] {
        let settings = config.server
        // Each certificate file, read once.
        let files: [(entry: ServerSettings.CertificateEntry, path: String, summary: CertificateSummary?)] = settings.certificates.map {
            entry in
            let path = ConfigLoader.resolve(entry.certificate, relativeTo: configPath)
            let summary = (try? Posix.readFile(path, limit: Posix.ReadLimit.certificate)).flatMap(CertificateInspector.summary)
            return (entry, path, summary)
        }
        let storage = settings.acme.map { CertificateStorage(root: ConfigLoader.resolve($0.storage, relativeTo: configPath)) }
        var rows: [CertificateRow] = []
        var listed = Set<String>()
        func acmeRow(_ host: String, storage: CertificateStorage) -> CertificateRow {
            let failure = storage.readFailure(host)
            if let meta = storage.readMeta(host), Posix.fileExists(storage.certificatePath(host)) {
                return CertificateRow(
                    host: host,
                    source: .acme,
                    issuer: meta.issuer,
                    notAfter: meta.notAfter,
                    nextRenewal: max(meta.renewAt, failure?.nextAttempt ?? 0),
                    lastError: failure?.message,
                    location: storage.certificatePath(host)
                )
            }
            return CertificateRow(host: host, source: .pending, nextRenewal: failure?.nextAttempt, lastError: failure?.message)
        }
        for loaded in sites {
            for located in loaded.site.hosts {
                let host = located.value.description
                guard listed.insert(host).inserted else { continue }
                if let file = files.first(where: { file in
                    file.entry.hosts.contains { CertificateInspector.name($0, covers: host) || $0 == host }
                        && (file.summary?.names.contains { CertificateInspector.name($0.lowercased(), covers: host) } ?? true)
                }) {
                    rows.append(
                        CertificateRow(
                            host: host,
                            source: .file,
                            issuer: file.summary?.issuer,
                            notAfter: file.summary?.notAfter,
                            lastError: file.summary == nil ? "cannot read \(file.path)" : nil,
                            location: file.path
                        )
                    )
                } else if let storage, settings.acme?.configHosts == true || settings.acme?.onDemand != nil {
                    rows.append(acmeRow(host, storage: storage))
                } else {
                    rows.append(CertificateRow(host: host, source: .none))
                }
            }
        }
        // Hosts obtained on demand: in the storage, not named in the config.
        if let storage {
            for host in storage.storedHosts() where listed.insert(host).inserted { rows.append(acmeRow(host, storage: storage)) }
        }
        return rows
    }
}
