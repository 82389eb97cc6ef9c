/// Why a referenced file could not be read (the CLI and server fill this in from the OS error).
public struct FileReadError: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// One site, ready to serve: the exact bytes and the document they encode.
///
/// A class, immutable: a reload hands thousands of these from one load to the next.
public final class LoadedSite: Sendable {
    public let site: Site
    /// Nil when the site's document could not be built (its errors are in the diagnostics).
    public let document: AASADocument?
    /// What is served: canonical compact JSON for generated sites, the file's bytes for verbatim ones.
    public let bytes: [UInt8]
    /// The verbatim file's path as resolved against the config's directory.
    public let file: String?
    let verbatimRoot: JSONNode?

    init(site: Site, document: AASADocument?, bytes: [UInt8], file: String?, verbatimRoot: JSONNode?) {
        self.site = site
        self.document = document
        self.bytes = bytes
        self.file = file
        self.verbatimRoot = verbatimRoot
    }

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
    /// Host → index into `sites`.
    package private(set) var hostTable: HostTable<Int>
    /// What the next load of an edited version of this file can take over (nil after errors).
    var reuse: SiteReuse?

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

    /// Loads `configBytes`. With `previous` (an earlier load of the same file without errors), sites
    /// whose bytes did not change are taken over from it instead of being built again; the result is
    /// the same as a full load's. A config with errors is always reported from a full load, so every
    /// position in its messages comes from the text as it is now.
    public static func load(
        configBytes: [UInt8],
        configPath: String,
        readFile: FileReader,
        reusing previous: LoadedConfig? = nil
    ) -> LoadedConfig {
        let spans = SiteReuse.siteSpans(configBytes)
        if let cache = previous?.reuse, cache.configPath == configPath, let spans,
            let loaded = load(configBytes, configPath, readFile, spans: spans, cache: cache), !loaded.hasErrors
        {
            return loaded
        }
        return load(configBytes, configPath, readFile, spans: spans, cache: nil)!
    }

    /// Nil when reuse turned out impossible (the `apps` names changed): the caller loads in full.
    private static func load(
        _ configBytes: [UInt8],
        _ configPath: String,
        _ readFile: FileReader,
        spans: [Range<Int>]?,
        cache: SiteReuse?
    ) -> LoadedConfig? {
        let spans = spans ?? []
        let hashes = spans.map { SiteReuse.hash(configBytes, $0) }
        var skipped: [Range<Int>] = []
        // By position in the sites array: the cache entry whose bytes this site repeats, or nil.
        var reusedEntry = [SiteReuse.Entry?](repeating: nil, count: spans.count)
        if let cache {
            for (position, span) in spans.enumerated() {
                if let entry = cache.entry(matching: configBytes, span, hash: hashes[position]) {
                    skipped.append(span)
                    reusedEntry[position] = entry
                }
            }
        }
        /// The span of the site at `index` that starts at `offset`, when the structural scan agrees with the parser.
        func spanPosition(_ index: Int, _ offset: Int) -> Int? {
            index < spans.count && spans[index].lowerBound == offset ? index : nil
        }

        let parsed = JSONParser.parse(configBytes, duplicateKeys: .error, skipping: skipped)
        var reader = NodeReader()
        var records: [ConfigDecoder.DecodedSite] = []
        let decodedConfig = parsed.root.flatMap { ConfigDecoder.decode($0, &reader, reusing: { index, offset in spanPosition(index, offset).flatMap { reusedEntry[$0]?.loaded.site } }, records: &records) }
        var findings = parsed.diagnostics.inFile(configPath)
        findings += reader.findings.inFile(configPath)
        guard let config = decodedConfig else {
            return LoadedConfig(config: nil, sites: [], diagnostics: findings, hostTable: HostTable())
        }
        var aliases: [String: String] = [:]
        for (name, id) in config.apps { aliases[name] = id.value }
        if let cache, !skipped.isEmpty, cache.aliases != aliases { return nil }

        for (_, id) in config.apps {
            var appFindings: [Diagnostic] = []
            AASAValidator.validateAppID(id) { severity, rule, message, origin in
                appFindings.append(Diagnostic(severity, rule, message, at: origin.location, path: origin.path.description))
            }
            findings += appFindings.inFile(configPath)
        }

        var sites: [LoadedSite] = []
        sites.reserveCapacity(config.sites.count)
        var entries: [SiteReuse.Entry] = []
        entries.reserveCapacity(config.sites.count)
        for (position, site) in config.sites.enumerated() {
            let record = records[position]
            let loaded: LoadedSite
            var decodeFindings: [Diagnostic]
            var buildFindings: [Diagnostic] = []
            if record.reused, let position = spanPosition(record.index, record.start.offset), let entry = reusedEntry[position] {
                func move(_ found: [Diagnostic]) -> [Diagnostic] {
                    guard entry.start != record.start || entry.index != record.index else { return found }
                    return found.map {
                        $0.file == configPath ? $0.moved(from: entry.start, index: entry.index, to: record.start, index: record.index) : $0
                    }
                }
                decodeFindings = move(entry.decodeFindings)
                // The site's own origins stay those of the load that decoded it; its findings move.
                // A hosted file is read on every reload: its bytes decide, not its name.
                if case .file = site.source,
                    !(entry.loaded.file.map { path in (try? readFile(path).get()) == entry.loaded.bytes } ?? false)
                {
                    loaded = loadSite(site, configPath: configPath, readFile: readFile, findings: &buildFindings)
                } else {
                    loaded = entry.loaded
                    buildFindings = move(entry.buildFindings)
                }
                findings += decodeFindings
            } else {
                decodeFindings = Array(reader.findings[record.findings]).inFile(configPath)
                loaded = loadSite(site, configPath: configPath, readFile: readFile, findings: &buildFindings)
            }
            findings += buildFindings
            if let position = spanPosition(record.index, record.start.offset) {
                entries.append(
                    SiteReuse.Entry(
                        span: spans[position],
                        start: record.start,
                        index: record.index,
                        hash: hashes[position],
                        loaded: loaded,
                        decodeFindings: decodeFindings,
                        buildFindings: buildFindings
                    )
                )
            }
            sites.append(loaded)
        }

        // When every site serves the same hosts at the same position as in the previous load (the usual
        // edit), the previous host table is this one, and it had no duplicates.
        var table = HostTable<Int>()
        if let cache, cache.entries.count == sites.count,
            zip(cache.entries, sites).allSatisfy({ entry, loaded in
                entry.loaded === loaded || entry.loaded.site.hosts.map(\.value) == loaded.site.hosts.map(\.value)
            })
        {
            table = cache.hostTable
        } else {
            var claimed: [HostPattern: Origin] = [:]
            claimed.reserveCapacity(sites.count * 2)
            for (position, loaded) in sites.enumerated() {
                for host in loaded.site.hosts {
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
                    table.insert(host.value, position)
                }
            }
        }

        var result = LoadedConfig(config: config, sites: sites, diagnostics: findings, hostTable: table)
        if !result.hasErrors, !spans.isEmpty, entries.count == config.sites.count {
            result.reuse = SiteReuse(configPath: configPath, source: configBytes, aliases: aliases, entries: entries, hostTable: table)
        }
        return result
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
