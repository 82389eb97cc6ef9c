/// Why a referenced file could not be read (the CLI and server fill this in from the OS error).
public struct FileReadError: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// One site, ready to serve: the exact bytes and the document they encode.
public struct LoadedSite: Sendable {
    public var site: Site
    /// Nil when the site's document could not be built (its errors are in the diagnostics).
    public var document: AASADocument?
    /// What is served: canonical compact JSON for generated sites, the file's bytes for verbatim ones.
    public var bytes: [UInt8]
    /// The verbatim file's path as resolved against the config's directory.
    public var file: String?
    let verbatimRoot: JSONNode?

    /// The document indented for reading (`generate --pretty`); same content as ``bytes``.
    public func prettyBytes() -> [UInt8] {
        if let verbatimRoot { return JSONWriter.bytes(JSONOutput(verbatimRoot), pretty: true) }
        if let document { return AASARenderer.bytes(document, pretty: true) }
        return bytes
    }
}

/// A config with every site's document built and validated: what the server and the CLI work from.
public struct LoadedConfig: Sendable {
    public var config: Config?
    public var sites: [LoadedSite]
    public var diagnostics: [Diagnostic]
    private var hostTable: HostTable<Int>

    public static let emptyDocumentBytes = AASARenderer.bytes(.empty)

    public var hasErrors: Bool { diagnostics.hasErrors }

    /// The site serving `host` (a Host header value: any case, port and trailing dot ignored).
    public func site(forHost host: String) -> LoadedSite? {
        hostTable.lookup(host).map { sites[$0] }
    }

    init(config: Config?, sites: [LoadedSite], diagnostics: [Diagnostic], hostTable: HostTable<Int>) {
        self.config = config
        self.sites = sites
        self.diagnostics = diagnostics
        self.hostTable = hostTable
    }
}

/// Reads, checks and generates everything a config describes. Pure: file access comes in as a closure.
public enum ConfigLoader {
    public typealias FileReader = (String) -> Result<[UInt8], FileReadError>

    public static func load(configBytes: [UInt8], configPath: String, readFile: FileReader) -> LoadedConfig {
        let decoded = ConfigDecoder.decode(configBytes)
        var findings = decoded.diagnostics.inFile(configPath)
        guard let config = decoded.config else {
            return LoadedConfig(config: nil, sites: [], diagnostics: findings, hostTable: HostTable())
        }
        for (_, id) in config.apps {
            var appFindings: [Diagnostic] = []
            AASAValidator.validateAppID(id) { severity, rule, message, origin in
                appFindings.append(Diagnostic(severity, rule, message, at: origin.location, path: origin.path.description))
            }
            findings += appFindings.inFile(configPath)
        }

        var table = HostTable<Int>()
        var claimed: [HostPattern: Origin] = [:]
        var sites: [LoadedSite] = []
        for site in config.sites {
            for host in site.hosts {
                if let first = claimed[host.value] {
                    findings.append(
                        Diagnostic(
                            .error,
                            "host.duplicate",
                            "host \"\(host.value)\" is already served by the site at \(first.path)"
                                + (first.location.map { " (line \($0.line))" } ?? "")
                                + "; each host has exactly one document, so list it in one site only",
                            at: host.origin.location,
                            path: host.origin.path.description,
                            file: configPath
                        )
                    )
                    continue
                }
                claimed[host.value] = host.origin
                table.insert(host.value, sites.count)
            }
            let loaded = loadSite(site, configPath: configPath, readFile: readFile, findings: &findings)
            sites.append(loaded)
        }
        return LoadedConfig(config: config, sites: sites, diagnostics: findings, hostTable: table)
    }

    static func loadSite(_ site: Site, configPath: String, readFile: FileReader, findings: inout [Diagnostic]) -> LoadedSite {
        switch site.source {
        case .generated(let generated):
            let output = Generator.document(for: generated)
            var siteFindings = output.diagnostics
            siteFindings += AASAValidator.validate(output.document)
            if let appclips = generated.appclips, !appclips.isEmpty,
                let wildcard = site.hosts.first(where: { $0.value.isWildcard })
            {
                siteFindings.append(
                    Diagnostic(
                        .error,
                        "appclips.wildcard-host",
                        "\"appclips\" is served on the wildcard host \"\(wildcard.value)\", but App Clip associated "
                            + "domains cannot be wildcards; move appclips to a site with exact hosts",
                        at: generated.appclipsOrigin.location,
                        path: generated.appclipsOrigin.path.description
                    )
                )
            }
            let bytes = AASARenderer.bytes(output.document)
            // The breakdown costs a second rendering, so only documents near the limit pay for it.
            siteFindings += AASAValidator.validateSize(
                bytes.count,
                contributors: bytes.count >= AASAValidator.sizeWarningThreshold ? sizeContributors(output.document) : [],
                origin: site.origin
            )
            findings += siteFindings.inFile(configPath)
            return LoadedSite(site: site, document: output.document, bytes: bytes, file: nil, verbatimRoot: nil)

        case .file(let reference):
            let path = resolve(reference.value, relativeTo: configPath)
            switch readFile(path) {
            case .failure(let error):
                findings.append(
                    Diagnostic(
                        .error,
                        "file.unreadable",
                        "cannot read the AASA file \"\(path)\" for site \(site.name): \(error.message)",
                        at: reference.origin.location,
                        path: reference.origin.path.description,
                        file: configPath
                    )
                )
                return LoadedSite(site: site, document: nil, bytes: [], file: path, verbatimRoot: nil)
            case .success(let bytes):
                let parsed = JSONParser.parse(bytes, duplicateKeys: .warning)
                var fileFindings = parsed.diagnostics
                var document: AASADocument?
                if let root = parsed.root {
                    let decoded = AASADecoder.decode(root)
                    fileFindings += decoded.diagnostics
                    document = decoded.document
                    if let document { fileFindings += AASAValidator.validate(document) }
                }
                fileFindings += AASAValidator.validateSize(bytes.count)
                if document?.appclips.map({ !$0.apps.isEmpty }) == true,
                    let wildcard = site.hosts.first(where: { $0.value.isWildcard })
                {
                    findings.append(
                        Diagnostic(
                            .error,
                            "appclips.wildcard-host",
                            "\"\(path)\" has \"appclips\" but is served on the wildcard host \"\(wildcard.value)\"; "
                                + "App Clip associated domains cannot be wildcards",
                            at: wildcard.origin.location,
                            path: wildcard.origin.path.description,
                            file: configPath
                        )
                    )
                }
                findings += fileFindings.inFile(path)
                return LoadedSite(site: site, document: document, bytes: bytes, file: path, verbatimRoot: parsed.root)
            }
        }
    }

    /// Which parts of a document take the most bytes, for the size-limit message.
    static func sizeContributors(_ document: AASADocument) -> [(String, Int)] {
        var parts: [(String, Int)] = []
        if let applinks = document.applinks {
            for details in applinks.details {
                let name = details.appIDs != nil ? "details entry for \(details.effectiveAppIDs.joined(separator: ", "))"
                    : "legacy entry for \(details.appID?.value ?? "?")"
                parts.append((name + " (\(details.origin.path))", JSONWriter.bytes(AASARenderer.render(details)).count))
            }
            for variable in applinks.substitutionVariables {
                let size = JSONWriter.bytes(.array(variable.values.map { .string($0.value) })).count
                parts.append(("substitution variable \"\(variable.name)\"", size))
            }
        }
        return parts
    }

    /// Resolves `path` against the directory of `configPath` (absolute paths stay as they are).
    public static func resolve(_ path: String, relativeTo configPath: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let slash = configPath.lastIndex(of: "/") else { return path }
        return String(configPath[...slash]) + path
    }
}
