import AASA
import Posix
import TLS

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
