public import AASA
public import Posix
import Synchronization
import TLS

/// Where the served configuration comes from: the config file, every document it references and its
/// certificates. The first load and every reload go through ``load(now:)``; a load that succeeded is
/// remembered, so the next one takes over every site whose bytes did not change.
public final class ConfigSource: Sendable {
    public let path: String
    /// Applied to the config's server settings after every load: the command line's `--listen` and
    /// `--admin`, or `dev`'s own listeners and certificate. Everything downstream (serving, restart
    /// checks) sees only the effective settings.
    let adjustSettings: @Sendable (ServerSettings) -> ServerSettings
    private let lastGood = Mutex<LoadedConfig?>(nil)
    /// The config's bytes when they came from elsewhere than `path` (standard input, for `validate
    /// --config -`); `path` then only names it and anchors relative file names.
    let contents: [UInt8]?
    /// `dev`: its certificate comes from its own local CA, which is not worth a warning there, and the
    /// placeholder app of its starter config is a warning (it still serves, to try the set-up) where
    /// `validate` makes it an error.
    let forDevelopment: Bool
    /// False for `validate --no-certificates`: certificate and key files are not read (CI without the
    /// secrets); their declared hosts still have to cover every site.
    let readsCertificates: Bool
    /// `serve`: keep only what serving needs (``LoadedConfig/forServing()``), and no file bytes for
    /// quoting (the server's log quotes no source lines).
    let servingOnly: Bool

    public init(
        path: String,
        contents: [UInt8]? = nil,
        forDevelopment: Bool = false,
        readsCertificates: Bool = true,
        servingOnly: Bool = false,
        adjustSettings: @escaping @Sendable (ServerSettings) -> ServerSettings = { $0 }
    ) {
        self.path = path
        self.contents = contents
        self.forDevelopment = forDevelopment
        self.readsCertificates = readsCertificates
        self.servingOnly = servingOnly
        self.adjustSettings = adjustSettings
    }

    /// How included files are found and told apart between reloads.
    public static let includeAccess = IncludeAccess(
        list: { Posix.directoryEntries($0) },
        stamp: { Posix.fileStamp($0) }
    )

    /// A config as read, with what its certificates and files add.
    public struct Loaded: Sendable {
        public var config: LoadedConfig
        var tls: TLSContexts?
        var adminPolicy: AdminPolicy
        /// The config's findings and the certificates'.
        public var diagnostics: [Diagnostic]
        /// The config, every hosted document and every certificate and key: what a reload reads.
        public var files: [String]
        /// The bytes of every file read, to quote their lines in findings.
        public var sources: [String: [UInt8]]
        public var microseconds: Int
        var certificateFingerprint: UInt64?

        /// The server settings in force for this config (after the source's adjustments).
        public var settings: ServerSettings { config.config?.server ?? ServerSettings() }
    }

    /// Reads and checks everything. `nil` and the error when the config file itself cannot be read.
    public func load(now: Int) -> Result<Loaded, FileError> {
        let started = Posix.monotonicMicroseconds()
        let bytes: [UInt8]
        if let contents {
            bytes = contents
        } else {
            do {
                bytes = try Posix.readFile(path, limit: Posix.ReadLimit.config)
            } catch {
                return .failure(error)
            }
        }
        let read = ReadFiles()
        var config = ConfigLoader.load(
            configBytes: bytes,
            configPath: path,
            readFile: { file in
                do throws(FileError) {
                    let contents = try Posix.readFile(file, limit: Posix.ReadLimit.document)
                    read.files.withLock { $0[file] = contents }
                    return .success(contents)
                } catch {
                    return .failure(FileReadError(error.message))
                }
            },
            reusing: lastGood.withLock { $0 },
            parallel: { Posix.parallelFor($0, $1) },
            servingOnly: servingOnly,
            includes: ConfigSource.includeAccess
        )
        if let server = config.config?.server { config.config?.server = adjustSettings(server) }
        if forDevelopment {
            config.diagnostics = config.diagnostics.map { finding in
                var finding = finding
                if finding.rule == "appid.placeholder" { finding.severity = .warning }
                return finding
            }
        }
        var diagnostics = config.diagnostics
        var certificates = CertificateLoader.Loaded(contexts: nil, diagnostics: [], fingerprint: nil, files: [])
        var adminPolicy = AdminPolicy()
        var secretFiles: [String] = []
        // Checked even when other parts have errors: one run reports everything it can.
        if let settings = config.config?.server {
            if !readsCertificates {
                diagnostics += CertificateLoader.checkDeclared(settings, configPath: path, sites: config.sites)
            } else {
                certificates = CertificateLoader.load(
                    settings,
                    configPath: path,
                    now: now,
                    sites: config.sites,
                    developmentCertificatesExpected: forDevelopment
                )
                diagnostics += certificates.diagnostics
            }
            let admin = Self.adminPolicy(settings, configPath: path)
            adminPolicy = admin.policy
            diagnostics += admin.diagnostics
            secretFiles = admin.files
        }
        // Include patterns are watched as patterns: a tenant file added later is seen too.
        var files =
            [path] + config.includePatterns + config.sites.hostedFiles
            + certificates.files + secretFiles
        var seen = Set<String>()
        files.removeAll { !seen.insert($0).inserted }
        var sources = servingOnly ? [:] : read.files.withLock { $0 }
        if !servingOnly { sources[path] = bytes }

        return .success(
            Loaded(
                config: config,
                tls: certificates.contexts,
                adminPolicy: adminPolicy,
                diagnostics: diagnostics,
                files: files,
                sources: sources,
                microseconds: Int(Posix.monotonicMicroseconds() - started),
                certificateFingerprint: certificates.fingerprint
            )
        )
    }

    /// The admin listener's policy: the token from `adminTokenFile` (at least 16 printable characters,
    /// surrounding whitespace ignored), read-only when exposed without one.
    static func adminPolicy(
        _ settings: ServerSettings,
        configPath: String
    ) -> (policy: AdminPolicy, diagnostics: [Diagnostic], files: [String]) {
        guard let name = settings.adminTokenFile else {
            return (AdminPolicy(token: nil, readOnly: settings.adminExposed), [], [])
        }
        let file = ConfigLoader.resolve(name, relativeTo: configPath)
        func refuse(_ message: String) -> (policy: AdminPolicy, diagnostics: [Diagnostic], files: [String]) {
            (AdminPolicy(token: nil, readOnly: true), [Diagnostic(.error, "server.admin-token", message, file: file)], [file])
        }
        let bytes: [UInt8]
        do {
            bytes = try Posix.readFile(file, limit: 4096)
        } catch {
            return refuse("cannot read the admin token: \(error.message)")
        }
        var token = ArraySlice(bytes)
        while let first = token.first, first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D { token.removeFirst() }
        while let last = token.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { token.removeLast() }
        guard token.count >= 16, token.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return refuse("the admin token must be at least 16 printable characters without spaces (e.g. `openssl rand -hex 32`)")
        }
        return (AdminPolicy(token: Array(token), readOnly: false), [], [file])
    }

    /// Remembers `loaded` as the config in force: the next load reuses its unchanged sites. Returns the
    /// config it replaces, for the caller to free once the new one serves.
    @discardableResult
    func commit(_ loaded: Loaded) -> LoadedConfig? {
        lastGood.withLock { current in
            defer { current = loaded.config }
            return current
        }
    }

    /// Every file a load read, gathered from the threads that read them.
    private final class ReadFiles: Sendable {
        let files = Mutex<[String: [UInt8]]>([:])
    }
}
