public import AASA
import Posix
public import TLS

/// Loads the config's certificates: reads the PEM files (relative to the config), checks each one
/// (key match, chain order, expiry, names), and builds the SNI table. Any error means no contexts.
public enum TLSSetup {
    public static func load(_ settings: ServerSettings, configPath: String, now: Int) -> (contexts: TLSContexts?, diagnostics: [Diagnostic]) {
        guard !settings.certificates.isEmpty else { return (nil, []) }
        var findings: [Diagnostic] = []
        var certificates: [TLSContexts.Certificate] = []
        for entry in settings.certificates {
            let certificatePath = ConfigLoader.resolve(entry.certificate, relativeTo: configPath)
            let keyPath = ConfigLoader.resolve(entry.key, relativeTo: configPath)
            var files: [String: [UInt8]] = [:]
            for path in [certificatePath, keyPath] {
                do {
                    files[path] = try Posix.readFile(path)
                } catch {
                    findings.append(
                        Diagnostic(
                            .error,
                            "file.unreadable",
                            "cannot read \(path): \(error.reason.lowercased())",
                            at: entry.origin.location,
                            path: entry.origin.path.description,
                            file: configPath
                        )
                    )
                }
            }
            guard let chain = files[certificatePath], let key = files[keyPath] else { continue }
            for finding in CertificateInspector.check(chainPEM: chain, keyPEM: key, hosts: entry.hosts, now: now) {
                let file = finding.rule == "tls.key" || finding.rule == "tls.key-mismatch" ? keyPath : certificatePath
                findings.append(Diagnostic(finding.isError ? .error : .warning, finding.rule, finding.message, file: file))
            }
            certificates.append(TLSContexts.Certificate(hosts: entry.hosts, chainPEM: chain, keyPEM: key, label: certificatePath))
        }
        guard !findings.hasErrors else { return (nil, findings) }
        do {
            return (try TLSContexts(certificates), findings)
        } catch {
            findings.append(Diagnostic(.error, "tls.context", error.description, file: configPath))
            return (nil, findings)
        }
    }
}
