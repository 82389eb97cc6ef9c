/// Why a referenced file could not be read (the CLI and server fill this in from the OS error).
public struct FileReadError: Error, Sendable {
    public var message: String
    /// The file's size, when it was not read because it is over the limit.
    public var size: Int?
    public init(_ message: String) { self.message = message }
}

/// One site, ready to serve: the exact bytes and the document they encode.
///
/// A class, immutable: a reload hands thousands of these from one load to the next.
public final class LoadedSite: Sendable {
    public let site: Site
    /// Nil when the site's document could not be built (its errors are in the diagnostics).
    public var document: AASADocument? { model?.document }
    /// What is served: canonical compact JSON for generated sites, the file's bytes for verbatim ones.
    /// Held once, at a fixed address: the server's prepared response points at it.
    public let served: ImmutableBytes
    /// A copy of ``served``.
    public var bytes: [UInt8] { served.array }
    /// The verbatim file's path as resolved against the config's directory.
    public let file: String?
    var verbatimRoot: JSONNode? { model?.verbatimRoot }
    /// What only the command line reads, boxed: a million serving-form sites then pay one pointer each
    /// for it, not the inline space of every optional field.
    private let model: Model?

    final class Model: Sendable {
        let document: AASADocument?
        let verbatimRoot: JSONNode?

        init(document: AASADocument?, verbatimRoot: JSONNode?) {
            self.document = document
            self.verbatimRoot = verbatimRoot
        }
    }
    /// False for an Android-only site: its hosts get the unknown-host answer on the AASA paths.
    public var servesApple: Bool { if case .none = site.source { return false } else { return true } }
    /// `/.well-known/assetlinks.json`, when the site has Android apps.
    public let assetLinks: AssetLinks?

    /// A site's Android statement list: what is served and what it says.
    public final class AssetLinks: Sendable {
        public let bytes: [UInt8]
        /// Nil when a hosted file could not be parsed (its errors are in the diagnostics).
        public let statements: [AssetStatement]?
        /// The hosted file, resolved against the config's directory.
        public let file: String?
        let verbatimRoot: JSONNode?

        init(bytes: [UInt8], statements: [AssetStatement]?, file: String?, verbatimRoot: JSONNode?) {
            self.bytes = bytes
            self.statements = statements
            self.file = file
            self.verbatimRoot = verbatimRoot
        }

        /// The statement list indented for reading (`generate --pretty`).
        public func prettyBytes() -> [UInt8] {
            if let verbatimRoot { return JSONWriter.bytes(JSONOutput(verbatimRoot), pretty: true) }
            if let statements { return JSONWriter.bytes(AssetLinksGenerator.render(statements), pretty: true) }
            return bytes
        }
    }

    /// How logs and metrics name the site: its first host (``Site/name``), without copying the site.
    public var label: String { site.hosts.first?.value.description ?? site.name }

    /// True once ``forServing()`` dropped what only the command line needs.
    public let isServingForm: Bool
    /// The included file the site is written in; nil for the config itself.
    public let definedIn: String?

    convenience init(
        site: Site,
        document: AASADocument?,
        bytes: [UInt8],
        file: String?,
        verbatimRoot: JSONNode?,
        assetLinks: AssetLinks? = nil,
        definedIn: String? = nil
    ) {
        self.init(
            site: site,
            document: document,
            served: bytes.isEmpty ? .empty : ImmutableBytes(bytes),
            file: file,
            verbatimRoot: verbatimRoot,
            assetLinks: assetLinks,
            definedIn: definedIn
        )
    }

    init(
        site: Site,
        document: AASADocument?,
        served: ImmutableBytes,
        file: String?,
        verbatimRoot: JSONNode?,
        assetLinks: AssetLinks? = nil,
        isServingForm: Bool = false,
        definedIn: String? = nil
    ) {
        self.site = site
        model = document == nil && verbatimRoot == nil ? nil : Model(document: document, verbatimRoot: verbatimRoot)
        self.served = served
        self.file = file
        self.assetLinks = assetLinks
        self.isServingForm = isServingForm
        self.definedIn = definedIn
    }

    /// What serving and the next reload need, and nothing else: the served bytes, the hosts (their
    /// positions sharing the site's path), where hosted files live. The decoded config and the
    /// document model — most of a site's memory — are dropped; `match` and `check` load the full form.
    public func forServing() -> LoadedSite {
        if isServingForm { return self }
        return Self.servingForm(site: site, served: served, file: file, assetLinks: assetLinks, definedIn: definedIn)
    }

    /// A site built straight into its serving form (``forServing()``), without the full form first.
    static func servingForm(
        site: Site,
        served: ImmutableBytes,
        file: String?,
        assetLinks: AssetLinks?,
        definedIn: String?
    )
        -> LoadedSite
    {
        let sitePath = site.origin.path
        let hosts = site.hosts.map { Located($0.value, Provenance($0.origin.location, sitePath)) }
        let source: Site.Source
        switch site.source {
        case .generated: source = Self.servingGenerated
        case .file(let reference): source = .file(reference)
        case .none: source = .none
        }
        let android: Site.AndroidSource?
        switch site.android {
        case .generated: android = .generated([])
        case .file(let reference): android = .file(reference)
        case nil: android = nil
        }
        return LoadedSite(
            site: Site(hosts: hosts, source: source, android: android, origin: site.origin),
            document: nil,
            served: served,
            file: file,
            verbatimRoot: nil,
            assetLinks: assetLinks.map {
                $0.statements == nil && $0.verbatimRoot == nil
                    ? $0 : AssetLinks(bytes: $0.bytes, statements: nil, file: $0.file, verbatimRoot: nil)
            },
            isServingForm: true,
            definedIn: definedIn
        )
    }

    /// One box for every serving-form generated site: what was generated is in ``bytes``.
    private static let servingGenerated = Site.Source.generated(GeneratedSite())

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
    public var sites: SiteList
    public var diagnostics: [Diagnostic]
    /// Host → position in `sites` (``SiteList/site(atPosition:)``).
    package private(set) var hostTable: HostTable<Int>
    /// What the next load of an edited version of this file can take over (nil after errors).
    var reuse: SiteReuse?
    /// The included files' built sites, for the next load to take over.
    var includeState: IncludeState?
    /// The include patterns, resolved against the config's directory: what to watch.
    public internal(set) var includePatterns: [String] = []

    public static let emptyDocumentBytes = AASARenderer.bytes(.empty)

    public var hasErrors: Bool { diagnostics.hasErrors }

    /// The site serving `host` (a Host header value: any case, port and trailing dot ignored).
    public func site(forHost host: String) -> LoadedSite? {
        hostTable.lookup(host).map { sites.site(atPosition: $0) }
    }

    init(config: Config?, sites: SiteList, diagnostics: [Diagnostic], hostTable: HostTable<Int>) {
        self.config = config
        self.sites = sites
        self.diagnostics = diagnostics.withoutCascades()
        self.hostTable = hostTable
    }
}

/// Runs `body` for every index in `0..<count`, possibly on several threads, returning when all are
/// done. The pure core starts no threads itself; the server passes one that does.
public typealias ParallelFor = @Sendable (_ count: Int, _ body: @Sendable (Int) -> Void) -> Void

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
        includes access: IncludeAccess? = nil
    ) -> LoadedConfig {
        let spans = SiteReuse.siteSpans(configBytes)
        let pool = DocumentPool()
        func attempt(_ cache: SiteReuse?) -> LoadedConfig? {
            load(configBytes, configPath, readFile, spans: spans, cache: cache, parallel: parallel, servingOnly: servingOnly, pool: pool)
        }
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
            pool: pool
        )
        // Config.sites stays what the config file itself lists; LoadedConfig.sites has every site, the
        // included files' chunks taken over as they are.
        let sites = SiteList(chunks: result.sites.chunks + included.chunks, keepingSlotsOf: previous?.sites)
        let config = result.config
        var findings = result.diagnostics + included.findings
        let (table, duplicates) = hostTable(
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

    /// Host → site position, and an error for each host a second site claims (naming the first), taking
    /// the previous load's table over where it can (a table that was in force had no duplicates):
    /// - as it is when the chunks are the same, or a changed chunk serves the same hosts in the same
    ///   slot, site by site (an edit that changed no host). Chunks taken over whole are not looked into;
    /// - updated for the hosts of the chunks that left and came (a file added, removed, or edited
    ///   with other hosts) when those are few: chunks keep their slots, so no other host moves;
    /// - otherwise, or when a new host is claimed already, built anew.
    static func hostTable(
        _ sites: SiteList,
        configPath: String,
        reusing previous: (sites: SiteList, table: HostTable<Int>)?,
        parallel: ParallelFor? = nil
    ) -> (table: HostTable<Int>, duplicates: [Diagnostic]) {
        guard let previous else { return HostTableBuilder.build(sites, configPath: configPath, parallel: parallel) }
        let kept = Set(sites.chunks.map(ObjectIdentifier.init))
        var previousPosition: [ObjectIdentifier: Int] = [:]
        for index in previous.sites.chunks.indices {
            previousPosition[ObjectIdentifier(previous.sites.chunks[index])] = previous.sites.position(chunk: index, offset: 0)
        }
        let removed = previous.sites.chunks.indices.filter { !kept.contains(ObjectIdentifier(previous.sites.chunks[$0])) }
        let added = sites.chunks.indices.filter { previousPosition[ObjectIdentifier(sites.chunks[$0])] == nil }
        // Chunks taken over keep their slots (SiteList(keepingSlotsOf:)); a list built otherwise may not.
        let slotsKept = sites.chunks.indices.allSatisfy { index in
            previousPosition[ObjectIdentifier(sites.chunks[index])].map { $0 == sites.position(chunk: index, offset: 0) } ?? true
        }
        guard slotsKept else { return HostTableBuilder.build(sites, configPath: configPath, parallel: parallel) }
        if removed.isEmpty && added.isEmpty { return (previous.table, []) }
        // The common edit: each changed chunk replaces one in the same slot with the same hosts, site by site.
        if removed.count == added.count,
            added.allSatisfy({ index in
                let position = sites.position(chunk: index, offset: 0)
                return removed.contains { old in
                    let before = previous.sites.chunks[old]
                    let after = sites.chunks[index]
                    return previous.sites.position(chunk: old, offset: 0) == position
                        && before.sites.count == after.sites.count
                        && zip(before.sites, after.sites).allSatisfy {
                            $0 === $1 || $0.site.hosts.map(\.value) == $1.site.hosts.map(\.value)
                        }
                }
            })
        {
            return (previous.table, [])
        }
        let changing = removed.reduce(0) { $0 + previous.sites.chunks[$1].hostCount } + added.reduce(0) { $0 + sites.chunks[$1].hostCount }
        guard changing * 16 <= sites.hostCount else { return HostTableBuilder.build(sites, configPath: configPath, parallel: parallel) }
        var table = previous.table
        for chunk in removed {
            for (offset, loaded) in previous.sites.chunks[chunk].sites.enumerated() {
                let position = previous.sites.position(chunk: chunk, offset: offset)
                for host in loaded.site.hosts { table.remove(host.value, ifAt: position) }
            }
        }
        for chunk in added {
            for (offset, loaded) in sites.chunks[chunk].sites.enumerated() {
                let position = sites.position(chunk: chunk, offset: offset)
                for host in loaded.site.hosts where table.insertIfAbsent(host.value, position) != nil {
                    // Claimed twice: the full build names the first claim as it always does.
                    return HostTableBuilder.build(sites, configPath: configPath, parallel: parallel)
                }
            }
        }
        return (table, [])
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

    /// One slot per site, each written by exactly one task: how parallel site builds hand back results.
    final class Slots<Element: Sendable>: @unchecked Sendable {
        private let storage: UnsafeMutableBufferPointer<Element?>
        init(count: Int) {
            storage = .allocate(capacity: count)
            storage.initialize(repeating: nil)
        }
        deinit {
            storage.deinitialize()
            storage.deallocate()
        }
        subscript(index: Int) -> Element? {
            get { storage[index] }
            set { storage[index] = newValue }
        }
    }

    /// Nil when reuse turned out impossible (the `apps` names changed): the caller loads in full.
    private static func load(
        _ configBytes: [UInt8],
        _ configPath: String,
        _ readFile: @escaping FileReader,
        spans: [Range<Int>]?,
        cache: SiteReuse?,
        parallel: ParallelFor?,
        servingOnly: Bool,
        pool: DocumentPool,
        splitParse: Bool = true
    ) -> LoadedConfig? {
        let spans = spans ?? []
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
        let loadParsingWholeFile = {
            load(
                configBytes,
                configPath,
                readFile,
                spans: spans,
                cache: cache,
                parallel: parallel,
                servingOnly: servingOnly,
                pool: pool,
                splitParse: false
            )
        }
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
        // The scan and the parser agree on where each site starts unless the text is not plain JSON.
        let spansAgree = spans.count == siteNodes.count && zip(spans, siteNodes).allSatisfy { $0.lowerBound == $1.location.offset }
        let frozenEntries = spansAgree ? reusedEntry : []
        if parsesPerSite && !spansAgree { return loadParsingWholeFile() }

        let outcomes = Slots<SiteOutcome>(count: siteNodes.count)
        let buildSite: @Sendable (Int) -> Void = { index in
            var node = siteNodes[index]
            if case .null = node.value, index < frozenEntries.count, let entry = frozenEntries[index] {
                outcomes[index] = reusedOutcome(entry, at: node.location, index: index, configPath: configPath, readFile: readFile)
                return
            }
            if parsesPerSite {
                let (start, lineStart) = siteStarts[index]
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
            var outcome = SiteOutcome()
            outcome.site = ConfigDecoder.decodeSite(node, ConfigDecoder.sitesPath.index(index), aliases: aliases, &siteReader)
            outcome.decodeFindings = siteReader.findings.inFile(configPath)
            if let site = outcome.site {
                let loaded = loadSite(
                    site,
                    configPath: configPath,
                    readFile: readFile,
                    findings: &outcome.buildFindings,
                    pool: pool,
                    servingOnly: servingOnly
                )
                if servingOnly { outcome.site = loaded.site }
                outcome.loaded = loaded
            }
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
        let (table, duplicates) = hostTable(
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
        if appleFileChanged || androidFileChanged {
            outcome.loaded = loadSite(site, configPath: configPath, readFile: readFile, findings: &outcome.buildFindings)
        } else {
            outcome.loaded = entry.loaded
            outcome.buildFindings = move(entry.buildFindings)
        }
        return outcome
    }

    static func loadSite(
        _ site: Site,
        configPath: String,
        readFile: FileReader,
        findings: inout [Diagnostic],
        definedIn: String? = nil,
        pool: DocumentPool? = nil,
        servingOnly: Bool = false
    ) -> LoadedSite {
        let apple = loadApple(site, configPath: configPath, readFile: readFile, findings: &findings)
        let served = apple.bytes.isEmpty ? ImmutableBytes.empty : ImmutableBytes(apple.bytes)
        let assetLinks = loadAssetLinks(site, configPath: configPath, readFile: readFile, findings: &findings)
        if servingOnly {
            return LoadedSite.servingForm(
                site: site,
                served: pool?.intern(served) ?? served,
                file: apple.file,
                assetLinks: assetLinks,
                definedIn: definedIn
            )
        }
        return LoadedSite(
            site: site,
            document: apple.document,
            served: pool?.intern(served) ?? served,
            file: apple.file,
            verbatimRoot: apple.verbatimRoot,
            assetLinks: assetLinks,
            definedIn: definedIn
        )
    }

    /// A site's AASA document as built: what is served and what it says.
    struct AppleDocument {
        var document: AASADocument?
        var bytes: [UInt8]
        /// The hosted file, resolved against the config's directory.
        var file: String?
        var verbatimRoot: JSONNode?
    }

    /// The site's Android statement list: generated from its apps, or a hosted file read and checked.
    static func loadAssetLinks(
        _ site: Site,
        configPath: String,
        readFile: FileReader,
        findings: inout [Diagnostic]
    ) -> LoadedSite.AssetLinks? {
        switch site.android {
        case nil: return nil
        case .generated(let apps):
            let statements = AssetLinksGenerator.statements(for: apps)
            return LoadedSite.AssetLinks(
                bytes: JSONWriter.bytes(AssetLinksGenerator.render(statements)),
                statements: statements,
                file: nil,
                verbatimRoot: nil
            )
        case .file(let reference):
            let path = resolve(reference.value, relativeTo: configPath)
            guard let bytes = readHosted(path, reference, what: "assetlinks", site: site, configPath: configPath, readFile, &findings)
            else {
                return LoadedSite.AssetLinks(bytes: [], statements: nil, file: path, verbatimRoot: nil)
            }
            do {
                let parsed = JSONParser.parse(bytes, duplicateKeys: .warning)
                var fileFindings = parsed.diagnostics
                var statements: [AssetStatement]?
                if let root = parsed.root {
                    let decoded = AssetLinksDecoder.decode(root)
                    fileFindings += decoded.diagnostics
                    statements = decoded.statements
                }
                findings += fileFindings.inFile(path)
                return LoadedSite.AssetLinks(bytes: bytes, statements: statements, file: path, verbatimRoot: parsed.root)
            }
        }
    }

    /// A file a site hosts verbatim; nil (with the finding) when it cannot be read.
    static func readHosted(
        _ path: String,
        _ reference: Located<String>,
        what: String,
        site: Site,
        configPath: String,
        _ readFile: FileReader,
        _ findings: inout [Diagnostic]
    ) -> [UInt8]? {
        switch readFile(path) {
        case .success(let bytes): return bytes
        case .failure(let error):
            findings.append(
                Diagnostic(
                    .error,
                    "file.unreadable",
                    "cannot read the \(what) file \"\(path)\" for site \(site.name): \(error.message)",
                    at: reference.origin.location,
                    path: reference.origin.path.description,
                    file: configPath
                )
            )
            return nil
        }
    }

    /// What the AASA paths serve for the site.
    static func loadApple(_ site: Site, configPath: String, readFile: FileReader, findings: inout [Diagnostic]) -> AppleDocument {
        switch site.source {
        case .none:
            return AppleDocument(document: nil, bytes: [], file: nil, verbatimRoot: nil)
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
                contributors: bytes.count >= AASAValidator.sizeWarningThreshold ? AASAValidator.sizeContributors(output.document) : [],
                origin: site.origin
            )
            findings += siteFindings.inFile(configPath)
            return AppleDocument(document: output.document, bytes: bytes, file: nil, verbatimRoot: nil)

        case .file(let reference):
            let path = resolve(reference.value, relativeTo: configPath)
            guard let bytes = readHosted(path, reference, what: "AASA", site: site, configPath: configPath, readFile, &findings) else {
                return AppleDocument(document: nil, bytes: [], file: path, verbatimRoot: nil)
            }
            do {
                let parsed = JSONParser.parse(bytes, duplicateKeys: .warning)
                var fileFindings = parsed.diagnostics
                var document: AASADocument?
                if let root = parsed.root {
                    let decoded = AASADecoder.decode(root)
                    fileFindings += decoded.diagnostics
                    document = decoded.document
                    if let document { fileFindings += AASAValidator.validate(document) }
                }
                fileFindings += AASAValidator.validateSize(bytes.count, of: document)
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
                return AppleDocument(document: document, bytes: bytes, file: path, verbatimRoot: parsed.root)
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
