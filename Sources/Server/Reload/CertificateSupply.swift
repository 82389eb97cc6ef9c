import AASA
public import TLS

/// The certificates of a generation, checked, with the SNI contexts built from them.
public struct CertificateSet: Sendable {
    var contexts: TLSContexts?
    var diagnostics: [Diagnostic]
    /// A hash of every certificate and key read, so a reload can say whether they were replaced.
    var fingerprint: UInt64?
    /// Every file read, to watch.
    var files: [String]
    /// The config's hosts no certificate file covers, which ACME obtains certificates for.
    var acmeHosts: [String] = []

    static let none = CertificateSet(contexts: nil, diagnostics: [], fingerprint: nil, files: [])
}

/// Where a generation's certificates come from — the one seam through which they enter: the files the
/// config names today, an ACME store tomorrow. Also decides whether the server's secrets (certificates,
/// the admin token) are the caller's business at all.
public struct CertificateSupply: Sendable {
    /// What a supply is asked: the effective settings, the config's path (relative names resolve against
    /// it), its sites (every HTTPS host needs a certificate covering it), the time and the file reader.
    struct Request {
        var settings: ServerSettings
        var configPath: String
        var sites: SiteList
        var now: Int
        var readFile: GenerationInputs.FileReader
    }

    /// Nil: the caller wants the documents only (`generate`, `match`, `check`): no certificate and no admin
    /// token is read or checked.
    let provide: (@Sendable (Request) -> CertificateSet)?

    /// The certificate and key files `server.certificates` names, read and checked (`serve`, `validate`).
    /// `developmentExpected`: `dev`, whose certificate is from its local CA.
    /// `obtained`: the certificates ACME gets (`serve` with `server.acme`), for hosts no file covers.
    public static func files(developmentExpected: Bool = false, obtained: (any ObtainedCertificates)? = nil) -> CertificateSupply {
        CertificateSupply { request in
            CertificateLoader.load(
                request.settings,
                configPath: request.configPath,
                now: request.now,
                sites: request.sites,
                developmentCertificatesExpected: developmentExpected,
                obtained: obtained,
                readFile: request.readFile
            )
        }
    }

    /// `validate --no-certificates`, for CI without the secrets: the files are not read, and each
    /// certificate is taken to name exactly its declared hosts, which must still cover every site.
    public static let declaredOnly = CertificateSupply { request in
        CertificateSet(
            contexts: nil,
            diagnostics: CertificateLoader.checkDeclared(request.settings, configPath: request.configPath, sites: request.sites),
            fingerprint: nil,
            files: []
        )
    }

    /// The config's documents only.
    public static let notRead = CertificateSupply(provide: nil)
}
