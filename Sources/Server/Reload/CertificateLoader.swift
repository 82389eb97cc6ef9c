import AASA
import Posix
import TLS

/// Reads the config's certificates (PEM files relative to the config, through the reader it is given),
/// checks each one (key match, chain order, expiry, names) and builds the SNI contexts. Any error means
/// no contexts. The file-based implementation behind ``CertificateSupply/files(developmentExpected:)``.
enum CertificateLoader {
    /// `sites`: every host must get a certificate covering it when a listener serves HTTPS.
    /// `developmentCertificatesExpected`: `dev`, whose own certificate is from its local CA.
    static func load(
        _ settings: ServerSettings,
        configPath: String,
        now: Int,
        sites: SiteList = [],
        developmentCertificatesExpected: Bool = false,
        obtained: (any ObtainedCertificates)? = nil,
        readFile: GenerationInputs.FileReader
    ) -> CertificateSet {
        // Each certificate is read by the check, the host table, its context and its summary: parsed once.
        PEMParseSharing.during {
            loadParsingOnce(
                settings,
                configPath: configPath,
                now: now,
                sites: sites,
                developmentCertificatesExpected: developmentCertificatesExpected,
                obtained: obtained,
                readFile: readFile
            )
        }
    }

    private static func loadParsingOnce(
        _ settings: ServerSettings,
        configPath: String,
        now: Int,
        sites: SiteList,
        developmentCertificatesExpected: Bool,
        obtained: (any ObtainedCertificates)?,
        readFile: GenerationInputs.FileReader
    ) -> CertificateSet {
        guard !settings.certificates.isEmpty || settings.acme != nil else {
            return CertificateSet(contexts: nil, diagnostics: [], fingerprint: nil, files: [])
        }
        var findings: [Diagnostic] = []
        var certificates: [TLSContexts.Certificate] = []
        var fingerprint = FNV1a.offsetBasis
        var files: [String] = []
        var hosts = HostTable<Int>()
        for entry in settings.certificates {
            let certificatePath = ConfigLoader.resolve(entry.certificate, relativeTo: configPath)
            let keyPath = ConfigLoader.resolve(entry.key, relativeTo: configPath)
            var contents: [String: [UInt8]] = [:]
            for path in [certificatePath, keyPath] {
                files.append(path)
                switch readFile(path, Posix.ReadLimit.certificate) {
                case .success(let bytes): contents[path] = bytes
                case .failure(let error):
                    findings.append(
                        Diagnostic(
                            .error,
                            "file.unreadable",
                            "cannot read \(path): \(error.message)",
                            at: entry.origin.location,
                            path: entry.origin.path.description,
                            file: configPath
                        )
                    )
                }
            }
            guard let chain = contents[certificatePath], let key = contents[keyPath] else { continue }
            let found = CertificateInspector.check(
                chainPEM: chain,
                keyPEM: key,
                hosts: entry.hosts,
                now: now,
                developmentCertificateExpected: developmentCertificatesExpected
            )
            for finding in found {
                let file = finding.rule == "tls.key" || finding.rule == "tls.key-mismatch" ? keyPath : certificatePath
                findings.append(Diagnostic(finding.isError ? .error : .warning, finding.rule, finding.message, file: file))
            }
            fingerprint = FNV1a.hash(chain, startingWith: FNV1a.hash(key, startingWith: fingerprint))
            for host in entry.hosts {
                if case .success(let pattern) = HostPattern.parse(host) { _ = hosts.insertIfAbsent(pattern, certificates.count) }
            }
            certificates.append(TLSContexts.Certificate(hosts: entry.hosts, chainPEM: chain, keyPEM: key, label: certificatePath))
        }
        var acmeHosts: [String] = []
        if let acme = settings.acme {
            let names = certificates.map { CertificateInspector.leafNames($0.chainPEM) ?? [] }
            let assignment = ACMEAssignment.assign(sites, acme: acme, fileNames: names, table: hosts, configPath: configPath)
            acmeHosts = assignment.hosts
            findings += assignment.diagnostics
            findings += ACMEAssignment.unreachableHosts(assignment.hosts, acme: acme, listeners: settings.listeners, configPath: configPath)
        } else if settings.listeners.contains(where: \.tls), !findings.hasErrors {
            // In `dev`, the hosts given on its command line get its certificate; other sites of a config it
            // serves only warn (they are not what is being developed).
            findings += uncoveredHosts(
                sites,
                names: certificates.map { CertificateInspector.leafNames($0.chainPEM) ?? [] },
                labels: certificates.map(\.label),
                table: hosts,
                configPath: configPath
            )
            .map { finding in
                var finding = finding
                if developmentCertificatesExpected { finding.severity = .warning }
                return finding
            }
        }
        guard !findings.hasErrors else { return CertificateSet(contexts: nil, diagnostics: findings, fingerprint: nil, files: files) }
        // `validate` has no certificate manager: with ACME and no files there is nothing to build.
        guard !certificates.isEmpty || (obtained != nil && settings.acme != nil) else {
            return CertificateSet(contexts: nil, diagnostics: findings, fingerprint: nil, files: files, acmeHosts: acmeHosts)
        }
        do {
            // SNI picks a certificate the way Host picks a document: exact name, then the longest wildcard;
            // a name no file covers goes to the certificates ACME obtained.
            let table = hosts
            let contexts = try TLSContexts(certificates, select: { table.lookup($0) }, obtained: settings.acme != nil ? obtained : nil)
            return CertificateSet(contexts: contexts, diagnostics: findings, fingerprint: fingerprint, files: files, acmeHosts: acmeHosts)
        } catch {
            findings.append(Diagnostic(.error, "tls.context", error.description, file: configPath))
            return CertificateSet(contexts: nil, diagnostics: findings, fingerprint: nil, files: files)
        }
    }

    /// Without reading the certificate files (`validate --no-certificates`, for CI that lacks the
    /// secrets): the certificates are taken to name exactly their declared "hosts".
    static func checkDeclared(_ settings: ServerSettings, configPath: String, sites: SiteList) -> [Diagnostic] {
        guard settings.listeners.contains(where: \.tls) else { return [] }
        var table = HostTable<Int>()
        for (index, entry) in settings.certificates.enumerated() {
            for host in entry.hosts {
                if case .success(let pattern) = HostPattern.parse(host) { _ = table.insertIfAbsent(pattern, index) }
            }
        }
        return uncoveredHosts(
            sites,
            names: settings.certificates.map { $0.hosts.map { $0.lowercased() } },
            labels: settings.certificates.map { "the certificate declared for \($0.hosts.joined(separator: ", "))" },
            table: table,
            configPath: configPath
        )
    }

    /// Sites with hosts whose TLS handshake would present a certificate not naming them: SNI picks the
    /// certificate the way the server will (exact name, longest wildcard, else the first), then its names
    /// are checked as a client checks them. One error per site, naming the hosts.
    static func uncoveredHosts(
        _ sites: SiteList,
        names: [[String]],
        labels: [String],
        table: HostTable<Int>,
        configPath: String
    ) -> [Diagnostic] {
        guard !names.isEmpty else { return [] }
        var findings: [Diagnostic] = []
        for loaded in sites {
            let site = loaded.site
            var uncovered: [String] = []
            var firstUncovered: Provenance?
            var chosen = 0
            for index in site.hosts.indices {
                let text = site.hosts.pattern(index).description
                let probe = text.hasPrefix("*.") ? "aasa-wildcard-check." + text.dropFirst(2) : text
                let index = table.lookup(probe) ?? 0
                if !names[index].contains(where: { CertificateInspector.name($0, covers: text) }) {
                    uncovered.append(text)
                    if firstUncovered == nil { firstUncovered = site.hosts[index].origin }
                    chosen = index
                }
            }
            guard !uncovered.isEmpty else { continue }
            let list = uncovered.map { "\"\($0)\"" }.joined(separator: ", ")
            findings.append(
                Diagnostic(
                    .error,
                    "tls.host-uncovered",
                    "no certificate covers \(list): HTTPS for \(uncovered.count == 1 ? "it" : "them") would present \(labels[chosen]) "
                        + "(names: \(names[chosen].joined(separator: ", "))), which Apple and every client reject. Add "
                        + "\(uncovered.count == 1 ? "the host" : "these hosts") to a certificate and to its \"hosts\" in server.certificates",
                    at: firstUncovered?.location ?? site.origin.location,
                    path: (firstUncovered?.path ?? site.origin.path).description,
                    file: loaded.definedIn ?? configPath
                )
            )
        }
        return findings
    }
}
