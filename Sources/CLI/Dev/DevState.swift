import AASA
import Posix
import TLS

/// The local CA and leaf shared by `dev` and `dev-cert`: created once, reused while valid.
enum DevState {
    struct Files {
        var caCertificate: String
        var caKey: String
        var certificate: String
        var key: String
    }

    static func files(in directory: String) -> Files {
        Files(
            caCertificate: directory + "/ca.pem",
            caKey: directory + "/ca-key.pem",
            certificate: directory + "/cert.pem",
            key: directory + "/key.pem"
        )
    }

    /// Makes (or reuses) the CA, and a leaf for `hosts` unless a valid one covering them exists.
    static func ensure(
        hosts: [String],
        directory: String,
        now: Int,
        days: Int = 825
    ) throws -> (Files, createdAuthority: Bool, createdLeaf: Bool) {
        let paths = files(in: directory)
        try Posix.makeDirectories(directory)
        var authority: DevCertificates.PEMPair
        var createdAuthority = false
        if let certificate = try? Posix.readFile(paths.caCertificate), let key = try? Posix.readFile(paths.caKey) {
            authority = DevCertificates.PEMPair(certificate: certificate, key: key)
        } else {
            authority = try DevCertificates.makeAuthority()
            try Posix.writeFileAtomically(authority.key, to: paths.caKey, mode: 0o600)
            try Posix.writeFileAtomically(authority.certificate, to: paths.caCertificate, mode: 0o644)
            createdAuthority = true
        }
        if !createdAuthority, let certificate = try? Posix.readFile(paths.certificate), let key = try? Posix.readFile(paths.key) {
            let findings = CertificateInspector.check(
                chainPEM: certificate,
                keyPEM: key,
                hosts: hosts,
                now: now + 30 * 86_400,
                developmentCertificateExpected: true
            )
            if findings.isEmpty { return (paths, false, false) }
        }
        let leaf = try DevCertificates.makeLeaf(hosts: hosts, authority: authority, validDays: days)
        try Posix.writeFileAtomically(leaf.key, to: paths.key, mode: 0o600)
        try Posix.writeFileAtomically(leaf.certificate, to: paths.certificate, mode: 0o644)
        return (paths, createdAuthority, true)
    }

    static func validateHosts(_ hosts: [String]) -> String? {
        if hosts.isEmpty { return "give at least one --host, e.g. --host dev.example.com" }
        for host in hosts {
            if case .failure(let error) = HostPattern.parse(host) { return error.message }
        }
        return nil
    }
}
