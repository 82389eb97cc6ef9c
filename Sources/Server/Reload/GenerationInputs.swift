public import AASA

/// Everything a generation is built from, as values and readers: the config's bytes, a reader for every
/// file it references (documents, certificates, the admin token), how included files are listed, where
/// certificates come from, and the time. ``ConfigReader`` fills it from the file system; tests fill it
/// from memory, so ``Generation/next(from:inputs:)`` runs without files or sockets.
public struct GenerationInputs: Sendable {
    /// Reads a referenced file, at most `limit` bytes.
    public typealias FileReader = @Sendable (_ path: String, _ limit: Int) -> Result<[UInt8], FileReadError>

    /// Names the config in findings and anchors relative file names.
    public var configPath: String
    public var configBytes: [UInt8]
    public var readFile: FileReader
    public var includes: IncludeAccess
    public var certificates: CertificateSupply
    public var options = GenerationOptions()
    /// Unix time: certificate expiry is judged against it and a changed document is stamped with it.
    public var now: Double
}

/// How a caller wants its config loaded.
public struct GenerationOptions: Sendable {
    /// `dev`: its certificate comes from its own local CA, which is not worth a warning there, and the
    /// placeholder app of its starter config is a warning (it still serves, to try the set-up) where
    /// `validate` makes it an error.
    public var forDevelopment = false
    /// `serve`: keep only what serving needs (``LoadedConfig/forServing()``), and no file bytes for quoting
    /// (the server's log quotes no source lines).
    public var servingOnly = false
    /// Applied to the config's server settings after every load: the command line's `--listen` and
    /// `--admin`, or `dev`'s own listeners and certificate. Everything downstream (serving, restart
    /// checks) sees only the effective settings.
    public var adjustSettings: @Sendable (ServerSettings) -> ServerSettings = { $0 }
    /// `serve`: the included files' sites restored from, and kept in, the state directory's snapshot.
    public var compiledSites: CompiledSitesStore?

    public init(
        forDevelopment: Bool = false,
        servingOnly: Bool = false,
        adjustSettings: @escaping @Sendable (ServerSettings) -> ServerSettings = { $0 }
    ) {
        self.forDevelopment = forDevelopment
        self.servingOnly = servingOnly
        self.adjustSettings = adjustSettings
    }
}
