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
            let findings = CertificateInspector.check(chainPEM: certificate, keyPEM: key, hosts: hosts, now: now + 30 * 86_400)
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

enum DevCertCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "dev-cert",
        abstract: "Create a local CA and a certificate for development hosts (for use with any server).",
        help: """
            OVERVIEW: Create (once) a local certificate authority and a certificate for the given hosts.

            ECDSA P-256, subjectAltNames for every host, the serverAuth extended key usage and 825 days of
            validity, as Apple requires for trusted certificates. An existing CA in DIR is reused; the
            certificate is renewed when it does not cover the hosts or expires within 30 days. Keys are
            written with mode 0600.

            USAGE: aasa-server dev-cert --host HOST [--host HOST]... --out DIR [--days N]

            OPTIONS:
              --host HOST   A host the certificate is for (repeatable; *.example.com is allowed).
              --out DIR     Where to write ca.pem, ca-key.pem, cert.pem and key.pem.
              --days N      Validity of the certificate, at most 825 (default 825; Mozilla's profiles want ≤ 366).
              --help        Show this help.

            """,
        spec: ArgumentSpec(options: ["--out", "--days"], repeatableOptions: ["--host"]),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let hosts = arguments.all("--host")
        if let problem = DevState.validateHosts(hosts) {
            return CommandLineTool.usageError(problem, console: console, usage: subcommand.help)
        }
        guard let directory = arguments.value("--out") else {
            return CommandLineTool.usageError("--out DIR is required", console: console, usage: subcommand.help)
        }
        let days = arguments.value("--days").map { Int($0) } ?? 825
        guard let days, (1...825).contains(days) else {
            return CommandLineTool.usageError("--days must be a number from 1 to 825", console: console, usage: subcommand.help)
        }
        do {
            let (files, createdAuthority, createdLeaf) = try DevState.ensure(
                hosts: hosts,
                directory: directory,
                now: Int(Posix.unixTime()),
                days: days
            )
            console.err(createdAuthority ? "created a new CA\n" : "reusing the CA in \(directory)\n")
            console.err(
                createdLeaf ? "created a certificate for \(hosts.joined(separator: ", "))\n" : "the existing certificate is still valid\n"
            )
            console.out("\(files.caCertificate)\n\(files.certificate)\n\(files.key)\n")
            return ExitStatus.success
        } catch {
            console.err("error: \(error)\n")
            return ExitStatus.failure
        }
    }
}
