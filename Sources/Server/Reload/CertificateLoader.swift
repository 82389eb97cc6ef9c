import AASA
import Posix
import TLS

/// Reads the config's certificates (PEM files relative to the config), checks each one (key match,
/// chain order, expiry, names) and builds the SNI contexts. Any error means no contexts.
enum CertificateLoader {
    struct Loaded {
        var contexts: TLSContexts?
        var diagnostics: [Diagnostic]
        /// A hash of every certificate and key read, so a reload can say whether they were replaced.
        var fingerprint: UInt64?
        /// Every file read, to watch.
        var files: [String]
    }

    static func load(_ settings: ServerSettings, configPath: String, now: Int) -> Loaded {
        guard !settings.certificates.isEmpty else { return Loaded(contexts: nil, diagnostics: [], fingerprint: nil, files: []) }
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
                do {
                    contents[path] = try Posix.readFile(path, limit: Posix.ReadLimit.certificate)
                } catch {
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
            for finding in CertificateInspector.check(chainPEM: chain, keyPEM: key, hosts: entry.hosts, now: now) {
                let file = finding.rule == "tls.key" || finding.rule == "tls.key-mismatch" ? keyPath : certificatePath
                findings.append(Diagnostic(finding.isError ? .error : .warning, finding.rule, finding.message, file: file))
            }
            fingerprint = FNV1a.hash(chain, startingWith: FNV1a.hash(key, startingWith: fingerprint))
            for host in entry.hosts {
                if case .success(let pattern) = HostPattern.parse(host) { _ = hosts.insertIfAbsent(pattern, certificates.count) }
            }
            certificates.append(TLSContexts.Certificate(hosts: entry.hosts, chainPEM: chain, keyPEM: key, label: certificatePath))
        }
        guard !findings.hasErrors else { return Loaded(contexts: nil, diagnostics: findings, fingerprint: nil, files: files) }
        do {
            // SNI picks a certificate the way Host picks a document: exact name, then the longest wildcard.
            let table = hosts
            let contexts = try TLSContexts(certificates) { table.lookup($0) }
            return Loaded(contexts: contexts, diagnostics: findings, fingerprint: fingerprint, files: files)
        } catch {
            findings.append(Diagnostic(.error, "tls.context", error.description, file: configPath))
            return Loaded(contexts: nil, diagnostics: findings, fingerprint: nil, files: files)
        }
    }
}
