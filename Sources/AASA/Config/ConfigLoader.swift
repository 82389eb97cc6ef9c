import Support
import Synchronization

/// Reads, checks and generates everything a config describes. Pure: file access comes in as a closure.
public enum ConfigLoader {
    public typealias FileReader = @Sendable (String) -> Result<[UInt8], FileReadError>

    /// Loads `configBytes`. With `previous` (an earlier load of the same file without errors), sites
    /// whose bytes did not change are taken over from it instead of being built again; the result is
    /// the same as a full load's. A config with errors is always reported from a full load, so every
    /// position in its messages comes from the text as it is now. With `parallel`, sites are built
    /// concurrently; the result does not depend on it. With `servingOnly`, each site is reduced to its
    /// serving form (``LoadedSite/forServing()``) as soon as it is built, so a large config never holds
    /// every site's decoded model at once.
    public static func load(
        configBytes: [UInt8],
        configPath: String,
        readFile: @escaping FileReader,
        reusing previous: LoadedConfig? = nil,
        parallel: ParallelFor? = nil,
        servingOnly: Bool = false,
        includes access: IncludeAccess? = nil,
        compiled: CompiledSites.Input? = nil
    ) -> LoadedConfig {
        load(
            configBytes: configBytes,
            configPath: configPath,
            readFile: readFile,
            reusing: previous,
            parallel: parallel,
            servingOnly: servingOnly,
            includes: access,
            compiled: compiled,
            decodesDirectly: true
        )
    }

    /// `decodesDirectly: false` takes every site through the JSON tree, as a site ``DirectSiteDecoder``
    /// declines is taken: what the direct reader is tested and fuzzed against.
    package static func load(
        configBytes: [UInt8],
        configPath: String,
        readFile: @escaping FileReader,
        reusing previous: LoadedConfig?,
        parallel: ParallelFor?,
        servingOnly: Bool,
        includes access: IncludeAccess?,
        compiled: CompiledSites.Input?,
        decodesDirectly: Bool
    ) -> LoadedConfig {
        let spans = SiteReuse.siteSpans(configBytes)
        let pool = DocumentPool()
        defer { pool.empty(parallel: parallel) }
        // The snapshot is read once, by the first load: later loads take unchanged files from the last one.
        let snapshot = SnapshotRead(compiled: compiled, configPath: configPath, reads: previous == nil)
        let inputs = PassInputs(
            configBytes: configBytes,
            configPath: configPath,
            readFile: readFile,
            spans: spans,
            parallel: parallel,
            servingOnly: servingOnly,
            pool: pool,
            snapshot: snapshot,
            decodesDirectly: decodesDirectly
        )
        func attempt(_ cache: SiteReuse?) -> LoadedConfig? { load(inputs, cache: cache) }
        var result: LoadedConfig
        if let cache = previous?.reuse, cache.configPath == configPath, spans != nil, let loaded = attempt(cache), !loaded.hasErrors {
            result = loaded
        } else {
            result = attempt(nil)!
        }
        guard let patterns = result.config?.includes, !patterns.isEmpty else { return result }
        guard let access, let aliases = result.config?.appTable else {
            var findings = result.diagnostics
            findings.append(
                Diagnostic(.error, "include.unsupported", "\"include\" needs file access this caller does not give", file: configPath)
            )
            return LoadedConfig(config: result.config, sites: result.sites, diagnostics: findings, hostTable: result.hostTable)
        }
        let included = IncludedSites.load(
            patterns,
            configPath: configPath,
            aliases: aliases,
            access: access,
            readFile: readFile,
            previous: previous?.includeState,
            parallel: parallel,
            servingOnly: servingOnly,
            pool: pool,
            compiled: compiled,
            snapshot: result.config.flatMap { snapshot.read($0) },
            decodesDirectly: decodesDirectly
        )
        // Config.sites stays what the config file itself lists; LoadedConfig.sites has every site, the
        // included files' groups taken over as they are.
        let sites = SiteList(groups: result.sites.groups + included.groups, keepingSlotsOf: previous?.sites)
        let config = result.config
        var findings = result.diagnostics + included.findings
        let (table, duplicates) = HostTableBuilder.build(
            sites,
            configPath: configPath,
            reusing: previous.map { ($0.sites, $0.hostTable) },
            parallel: parallel
        )
        findings += duplicates
        var merged = LoadedConfig(config: config, sites: sites, diagnostics: findings, hostTable: table)
        merged.reuse = result.reuse
        merged.includeState = included.state
        merged.includePatterns = included.patterns
        return merged
    }

    /// What building one site produced.
    private struct SiteOutcome: Sendable {
        var site: Site?
        var loaded: LoadedSite?
        var decodeFindings: [Diagnostic] = []
        var buildFindings: [Diagnostic] = []
        /// Parsing the site alone found a syntax problem (reported by a whole-file parse instead).
        var syntaxFinding = false
    }

    /// Where each span starts (spans in file order), in one pass over the text.
    private static func startLocations(_ bytes: [UInt8], at spans: [Range<Int>]) -> [(start: SourceLocation, lineStart: Int)] {
        bytes.withUnsafeBufferPointer { text in
            var result: [(start: SourceLocation, lineStart: Int)] = []
            result.reserveCapacity(spans.count)
            var line = 1
            var column = 1
            var lineStart = 0
            var cursor = 0
            for span in spans {
                while cursor < span.lowerBound {
                    if text[cursor] == 0x0A {
                        line += 1
                        column = 1
                        lineStart = cursor + 1
                    } else if text[cursor] & 0xC0 != 0x80 {
                        column += 1  // columns count characters, as the parser's do
                    }
                    cursor += 1
                }
                result.append((SourceLocation(offset: span.lowerBound, line: line, column: column), lineStart))
            }
            return result
        }
    }

    /// Nil when reuse turned out impossible (the `apps` names changed): the caller loads in full.
    /// What every pass over one config text shares (a load may pass twice: reusing the last load's
    /// sites, then without; or site by site, then the whole file).
    private struct PassInputs {
        let configBytes: [UInt8]
        let configPath: String
        let readFile: FileReader
        let spans: [Range<Int>]?
        let parallel: ParallelFor?
        let servingOnly: Bool
        let pool: DocumentPool
        let snapshot: SnapshotRead
        let decodesDirectly: Bool
    }

    private static func load(_ inputs: PassInputs, cache: SiteReuse?, splitParse: Bool = true) -> LoadedConfig? {
        let (configBytes, configPath, readFile) = (inputs.configBytes, inputs.configPath, inputs.readFile)
        let (parallel, servingOnly, pool, snapshot) = (inputs.parallel, inputs.servingOnly, inputs.pool, inputs.snapshot)
        let spans = inputs.spans ?? []
        let hashes = spans.map { SiteReuse.hash(configBytes, $0) }
        let checks = cache == nil ? [] : spans.map { SiteReuse.hash(configBytes, $0, seed: SiteReuse.checkSeed) }
        var skipped: [Range<Int>] = []
        // By position in the sites array: the cache entry whose bytes this site repeats, or nil.
        var reusedEntry = [SiteReuse.Entry?](repeating: nil, count: spans.count)
        if let cache {
            for (position, span) in spans.enumerated() {
                if let entry = cache.entry(matching: span, hash: hashes[position], check: checks[position]) {
                    skipped.append(span)
                    reusedEntry[position] = entry
                }
            }
        }

        // With threads to share the work, each site is also parsed by its own task: the whole-file parse
        // steps over every site. Any syntax finding inside a site sends the load back to one whole-file
        // parse, whose first error is the one reported.
        let parsesPerSite = splitParse && parallel != nil && spans.count - skipped.count >= 64
        let siteStarts = parsesPerSite ? startLocations(configBytes, at: spans) : []
        let parsed = JSONParser.parse(configBytes, duplicateKeys: .error, skipping: parsesPerSite ? spans : skipped)
        let loadParsingWholeFile = { load(inputs, cache: cache, splitParse: false) }
        // The first error in the file may be inside a site this parse stepped over.
        if parsesPerSite && !parsed.diagnostics.isEmpty { return loadParsingWholeFile() }
        var reader = NodeReader()
        let root = parsed.root.flatMap { ConfigDecoder.decodeRoot($0, &reader) }
        var findings = ConfigDecoder.forConfig(parsed.diagnostics).inFile(configPath)
        findings += reader.findings.inFile(configPath)
        guard var config = root?.config, let aliases = root?.aliases, let siteNodes = root?.siteNodes else {
            return LoadedConfig(config: nil, sites: SiteList(), diagnostics: findings, hostTable: HostTable())
        }
        if let cache, !skipped.isEmpty, cache.aliases != aliases { return nil }
        let names = AppNames(aliases)
        // The scan and the parser agree on where each site starts unless the text is not plain JSON.
        let spansAgree = spans.count == siteNodes.count && zip(spans, siteNodes).allSatisfy { $0.lowerBound == $1.location.offset }
        let frozenEntries = spansAgree ? reusedEntry : []
        if parsesPerSite && !spansAgree { return loadParsingWholeFile() }
        // Only a serving load keeps hosted documents: the command line checks every one it reads.
        let hostedDocuments = snapshot.compiled.flatMap { compiled in servingOnly ? compiled : nil }.map {
            HostedDocumentLookup(
                snapshot: snapshot.read(config),
                context: CompiledSites.documentContext(build: $0.build, servingOnly: servingOnly),
                compress: $0.compress
            )
        }

        let outcomes = TaskSlots<SiteOutcome>(count: siteNodes.count)
        let buildLoaded: @Sendable (Site, inout SiteOutcome) -> Void = { site, outcome in
            let loaded = SiteBuilder.loadSite(
                site,
                configPath: configPath,
                readFile: readFile,
                findings: &outcome.buildFindings,
                pool: pool,
                servingOnly: servingOnly,
                hostedDocuments: hostedDocuments
            )
            if servingOnly { outcome.site = loaded.site }
            outcome.loaded = loaded
        }
        let buildSite: @Sendable (Int) -> Void = { index in
            var node = siteNodes[index]
            if case .null = node.value, index < frozenEntries.count, let entry = frozenEntries[index] {
                outcomes[index] = reusedOutcome(entry, at: node.location, index: index, configPath: configPath, readFile: readFile)
                return
            }
            let sitePath = ConfigDecoder.sitesPath.index(index)
            var outcome = SiteOutcome()
            if parsesPerSite {
                let (start, lineStart) = siteStarts[index]
                // The common site needs no tree (``DirectSiteDecoder``), when it ends where the scan said.
                func decode(_ origins: DirectSiteDecoder.Origins) -> Site? {
                    guard inputs.decodesDirectly else { return nil }
                    let decoded = configBytes.withUnsafeBufferPointer {
                        DirectSiteDecoder.decode($0, at: start, lineStart: lineStart, path: sitePath, names: names, origins: origins)
                    }
                    guard let decoded, decoded.end.location.offset == spans[index].upperBound else { return nil }
                    return decoded.site
                }
                // A served site keeps no inner positions: the site is decoded with them only when building it
                // finds something they must name.
                if servingOnly, let bare = decode(.siteAndHosts) {
                    var bareOutcome = SiteOutcome()
                    buildLoaded(bare, &bareOutcome)
                    if bareOutcome.buildFindings.isEmpty {
                        outcomes[index] = bareOutcome
                        return
                    }
                }
                if let direct = decode(.everyValue) {
                    outcome.site = direct
                    buildLoaded(direct, &outcome)
                    outcomes[index] = outcome
                    return
                }
                let parsed = JSONParser.parseValue(
                    in: configBytes,
                    span: spans[index],
                    start: start,
                    lineStart: lineStart,
                    depth: 2,
                    duplicateKeys: .error
                )
                guard let root = parsed.root, parsed.diagnostics.isEmpty else {
                    outcomes[index] = SiteOutcome(syntaxFinding: true)
                    return
                }
                node = root
            }
            var siteReader = NodeReader()
            outcome.site = ConfigDecoder.decodeSite(node, sitePath, aliases: aliases, &siteReader)
            outcome.decodeFindings = siteReader.findings.inFile(configPath)
            if let site = outcome.site { buildLoaded(site, &outcome) }
            outcomes[index] = outcome
        }
        // Threads pay off only with enough sites to share out.
        if let parallel, siteNodes.count >= 64 {
            parallel(siteNodes.count, buildSite)
        } else {
            for index in siteNodes.indices { buildSite(index) }
        }
        if parsesPerSite && siteNodes.indices.contains(where: { outcomes[$0]?.syntaxFinding == true }) {
            return loadParsingWholeFile()
        }

        var sites: [LoadedSite] = []
        sites.reserveCapacity(siteNodes.count)
        // The server reads the loaded sites only: a second list of a million sites is memory and
        // reference counting for nothing.
        if !servingOnly { config.sites.reserveCapacity(siteNodes.count) }
        var entries: [SiteReuse.Entry] = []
        entries.reserveCapacity(siteNodes.count)
        var buildFindings: [Diagnostic] = []
        for index in siteNodes.indices {
            guard let outcome = outcomes[index] else { continue }
            findings += outcome.decodeFindings
            buildFindings += outcome.buildFindings
            guard let site = outcome.site, let loaded = outcome.loaded else { continue }
            if !servingOnly { config.sites.append(site) }
            sites.append(loaded)
            if spansAgree {
                entries.append(
                    SiteReuse.Entry(
                        span: spans[index],
                        start: siteNodes[index].location,
                        index: index,
                        hash: hashes[index],
                        check: checks.isEmpty ? SiteReuse.hash(configBytes, spans[index], seed: SiteReuse.checkSeed) : checks[index],
                        loaded: loaded,
                        decodeFindings: outcome.decodeFindings,
                        buildFindings: outcome.buildFindings
                    )
                )
            }
        }

        for (_, id) in config.apps {
            var appFindings: [Diagnostic] = []
            AASAValidator.validateAppID(id) { severity, rule, message, origin in
                appFindings.append(Diagnostic(severity, rule, message, at: origin.location, path: origin.path.description))
            }
            findings += appFindings.inFile(configPath)
        }
        findings += buildFindings

        // When every site serves the same hosts at the same position as in the previous load (the usual
        // edit), the previous host table is this one, and it had no duplicates.
        let list = SiteList(sites)
        let (table, duplicates) = HostTableBuilder.build(
            list,
            configPath: configPath,
            reusing: cache.map { (SiteList($0.entries.map(\.loaded)), $0.hostTable) },
            parallel: parallel
        )
        findings += duplicates

        var result = LoadedConfig(config: config, sites: list, diagnostics: findings, hostTable: table)
        if !result.hasErrors, spansAgree, !spans.isEmpty, entries.count == siteNodes.count {
            result.reuse = SiteReuse(configPath: configPath, aliases: aliases, entries: entries, hostTable: table)
        }
        return result
    }

    /// A site taken over from the previous load: its findings move to where it is now. The site's own
    /// origins stay those of the load that decoded it (only findings are shown to people).
    private static func reusedOutcome(
        _ entry: SiteReuse.Entry,
        at start: SourceLocation,
        index: Int,
        configPath: String,
        readFile: FileReader
    ) -> SiteOutcome {
        func move(_ found: [Diagnostic]) -> [Diagnostic] {
            guard entry.start != start || entry.index != index else { return found }
            return found.map { $0.file == configPath ? $0.moved(from: entry.start, index: entry.index, to: start, index: index) : $0 }
        }
        let site = entry.loaded.site
        var outcome = SiteOutcome(site: site, decodeFindings: move(entry.decodeFindings))
        // A hosted file is read on every reload: its bytes decide, not its name.
        let appleFileChanged: Bool
        if case .file = site.source {
            appleFileChanged =
                !(entry.loaded.file.map { path in (try? readFile(path).get()).map(entry.loaded.served.equals) == true } ?? false)
        } else {
            appleFileChanged = false
        }
        let androidFileChanged: Bool
        if case .file = site.android {
            androidFileChanged =
                !(entry.loaded.assetLinks?.file.map { path in (try? readFile(path).get()) == entry.loaded.assetLinks?.bytes } ?? false)
        } else {
            androidFileChanged = false
        }
        let landingPageChanged = entry.loaded.landingPage.map { page in (try? readFile(page.file).get()) != page.bytes } ?? false
        if appleFileChanged || androidFileChanged || landingPageChanged {
            outcome.loaded = SiteBuilder.loadSite(site, configPath: configPath, readFile: readFile, findings: &outcome.buildFindings)
        } else {
            outcome.loaded = entry.loaded
            outcome.buildFindings = move(entry.buildFindings)
        }
        return outcome
    }

    /// The state directory's snapshot, read at most once per load, when the config's sites are built (their
    /// hosted documents) or its included files are, whichever comes first.
    final class SnapshotRead: Sendable {
        /// Nil when the load keeps no snapshot (no store to read one from: the command line).
        let compiled: CompiledSites.Input?
        let configPath: String
        let reads: Bool
        private let cached = Mutex<CompiledSites??>(nil)

        init(compiled: CompiledSites.Input?, configPath: String, reads: Bool) {
            self.compiled = compiled
            self.configPath = configPath
            self.reads = reads
        }

        func read(_ config: Config) -> CompiledSites? {
            guard reads, let compiled, let directory = config.server.stateDirectory else { return nil }
            return cached.withLock { cached in
                if let done = cached { return done }
                let snapshot = compiled.read(ConfigLoader.resolve(directory, relativeTo: configPath))
                cached = .some(snapshot)
                return snapshot
            }
        }
    }

    /// Resolves `path` against the directory of `configPath` (absolute paths stay as they are).
    public static func resolve(_ path: String, relativeTo configPath: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let slash = configPath.lastIndex(of: "/") else { return path }
        return String(configPath[...slash]) + path
    }
}
