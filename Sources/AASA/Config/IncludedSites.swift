import Support

/// Sites kept in their own files: `"include": ["sites.d/*.json"]`. Each file holds one site object or an
/// array of sites, and is checked with its own file:line:column; a team or a provisioning system adds,
/// edits or removes a tenant by writing one file. A reload reads only the files whose size, time or inode
/// changed (the rest keep their built sites), so one tenant's edit costs one file's work whatever the
/// number of hosts.
public struct IncludeAccess: Sendable {
    /// The names in a directory (nil when it cannot be listed).
    public var list: @Sendable (String) -> [String]?
    /// Identifies a file's current content cheaply (size, modification time, inode); nil when missing.
    public var stamp: @Sendable (String) -> String?

    public init(list: @escaping @Sendable (String) -> [String]?, stamp: @escaping @Sendable (String) -> String?) {
        self.list = list
        self.stamp = stamp
    }
}

/// What a load keeps about its included files for the next one.
struct IncludeState: Sendable {
    final class File: Sendable {
        let stamp: String
        /// The file's sites; the same object for as long as the file is unchanged.
        let group: SiteList.Group
        let findings: [Diagnostic]
        /// Its content's digest, when the load keeps a snapshot (``CompiledSites``).
        let digest: CompiledSites.Digest?
        /// Taken from the snapshot rather than built from the file's bytes.
        let restored: Bool

        init(
            path: String,
            stamp: String,
            sites: [LoadedSite],
            findings: [Diagnostic],
            digest: CompiledSites.Digest? = nil,
            restored: Bool = false
        ) {
            self.stamp = stamp
            group = SiteList.Group(sites, source: path)
            self.findings = findings
            self.digest = digest
            self.restored = restored
        }
    }

    var files: [String: File]
    var aliases: AppTable
    /// Files this load built from their bytes, and files it took from the snapshot instead.
    var parsedFiles = 0
    var restoredFiles = 0
}

enum IncludedSites {
    struct Result {
        /// One per file, in file order.
        var groups: [SiteList.Group] = []
        var findings: [Diagnostic] = []
        var state = IncludeState(files: [:], aliases: AppTable())
        /// Each pattern as resolved against the config's directory, for watching.
        var patterns: [String] = []
    }

    /// Expands the patterns and loads each matching file, taking over every file whose stamp is the
    /// previous load's (under the same `apps`).
    static func load(
        _ patterns: [Located<String>],
        configPath: String,
        aliases: AppTable,
        access: IncludeAccess,
        readFile: @escaping ConfigLoader.FileReader,
        previous: IncludeState?,
        parallel: ParallelFor?,
        servingOnly: Bool,
        pool: DocumentPool,
        compiled: CompiledSites.Input? = nil,
        snapshot: CompiledSites? = nil,
        decodesDirectly: Bool = true
    ) -> Result {
        var result = Result()
        result.state.aliases = aliases
        var paths: [String] = []
        var seen = Set<String>()
        for pattern in patterns {
            let resolved = ConfigLoader.resolve(pattern.value, relativeTo: configPath)
            result.patterns.append(resolved)
            let matches = expand(resolved, access: access)
            switch matches {
            case .failure(let error):
                result.findings.append(
                    Diagnostic(
                        .error,
                        "include.missing",
                        error.message,
                        at: pattern.origin.location,
                        path: pattern.origin.path.description,
                        file: configPath
                    )
                )
            case .success(let found):
                if found.isEmpty {
                    result.findings.append(
                        Diagnostic(
                            .warning,
                            "include.empty",
                            "\"\(pattern.value)\" matches no file (yet): it adds no sites until one is written",
                            at: pattern.origin.location,
                            path: pattern.origin.path.description,
                            file: configPath
                        )
                    )
                }
                for path in found where seen.insert(path).inserted { paths.append(path) }
            }
        }
        let reusable = previous.flatMap { $0.aliases == aliases ? $0 : nil }
        let stamps = paths.map { access.stamp($0) }
        let files = TaskSlots<IncludeState.File>(count: paths.count)
        let restoring = compiled.map {
            Restoring(
                snapshot: snapshot,
                context: CompiledSites.context(build: $0.build, aliases: aliases, servingOnly: servingOnly),
                configPath: configPath,
                compress: $0.compress,
                documentContext: CompiledSites.documentContext(build: $0.build, servingOnly: servingOnly)
            )
        }
        let loadOne: @Sendable (Int) -> Void = { [paths] index in
            let path = paths[index]
            guard let stamp = stamps[index] else {
                files[index] = IncludeState.File(
                    path: path,
                    stamp: "",
                    sites: [],
                    findings: [
                        Diagnostic(.error, "file.unreadable", "cannot read the included file \"\(path)\": it disappeared", file: path)
                    ]
                )
                return
            }
            if let earlier = reusable?.files[path], earlier.stamp == stamp {
                files[index] = earlier
                return
            }
            files[index] = Self.loadFile(
                path,
                stamp: stamp,
                aliases: aliases,
                readFile: readFile,
                servingOnly: servingOnly,
                pool: pool,
                restoring: restoring,
                decodesDirectly: decodesDirectly
            )
        }
        let toLoad = paths.indices.count { index in reusable?.files[paths[index]]?.stamp != stamps[index] || stamps[index] == nil }
        if let parallel, toLoad >= 8 {
            parallel(paths.count, loadOne)
        } else {
            for index in paths.indices { loadOne(index) }
        }
        for (index, path) in paths.enumerated() {
            guard let file = files[index] else { continue }
            if file !== reusable?.files[path] {
                if file.restored { result.state.restoredFiles += 1 } else { result.state.parsedFiles += 1 }
            }
            result.groups.append(file.group)
            result.findings += file.findings
            if !file.findings.hasErrors { result.state.files[path] = file }
        }
        return result
    }

    /// A snapshot to take unchanged files from, and the context the load runs in.
    struct Restoring: Sendable {
        var snapshot: CompiledSites?
        var context: UInt64
        var configPath: String
        var compress: @Sendable ([UInt8]) -> [UInt8]
        var documentContext: UInt64
    }

    /// One included file: its sites, built as the main config's are, findings in that file — or, when
    /// `restoring` has the file under the same digest, the sites the snapshot kept.
    static func loadFile(
        _ path: String,
        stamp: String,
        aliases: AppTable,
        readFile: @escaping ConfigLoader.FileReader,
        servingOnly: Bool,
        pool: DocumentPool? = nil,
        restoring: Restoring? = nil,
        decodesDirectly: Bool = true
    ) -> IncludeState.File {
        let bytes: [UInt8]
        switch readFile(path) {
        case .failure(let error):
            return IncludeState.File(
                path: path,
                stamp: stamp,
                sites: [],
                findings: [Diagnostic(.error, "file.unreadable", "cannot read the included file \"\(path)\": \(error.message)", file: path)]
            )
        case .success(let read): bytes = read
        }
        let digest = restoring.map { _ in CompiledSites.Digest(bytes) }
        if let restoring, let digest,
            let sites = restoring.snapshot?.sites(
                for: path,
                configPath: restoring.configPath,
                digest: digest,
                context: restoring.context,
                pool: pool
            )
        {
            return IncludeState.File(path: path, stamp: stamp, sites: sites, findings: [], digest: digest, restored: true)
        }
        // A list of sites is built site by site as the parser reads it: each site's tree is decoded and
        // freed while it is still in the cache, instead of a whole file's trees held and walked again.
        // Only this function's thread touches it, so its accesses are not checked at run time (a dynamic
        // exclusivity check at every site appended).
        final class Built {
            @exclusivity(unchecked) var sites: [LoadedSite] = []
            @exclusivity(unchecked) var findings: [Diagnostic] = []
        }
        let built = Built()
        let includedFile = LoadedSite.IncludedFile(path)
        // The app IDs this file's sites hold are the file's own copies: every site's lists, documents and
        // checks retain and release them, and a string every loading thread shared had one counter that
        // the cores took from each other at each of those updates.
        let aliases = aliases.ownCopy()
        let names = AppNames(aliases)
        func build(_ node: JSONNode, at sitePath: JSONPath) {
            var reader = NodeReader()
            let site = ConfigDecoder.decodeSite(node, sitePath, aliases: aliases, &reader)
            built.findings += reader.findings.inFile(path)
            guard let site else { return }
            load(site)
        }
        let hostedDocuments = restoring.map {
            HostedDocumentLookup(snapshot: $0.snapshot, context: $0.documentContext, compress: $0.compress)
        }
        func loaded(_ site: Site) -> (site: LoadedSite, findings: [Diagnostic]) {
            var findings: [Diagnostic] = []
            let loaded = SiteBuilder.loadSite(
                site,
                configPath: path,
                readFile: readFile,
                findings: &findings,
                definedIn: includedFile,
                pool: pool,
                servingOnly: servingOnly,
                hostedDocuments: hostedDocuments
            )
            return (loaded, findings)
        }
        func load(_ site: Site) {
            let (site, findings) = loaded(site)
            built.sites.append(site)
            built.findings += findings
        }
        // The common site needs no tree (``DirectSiteDecoder``); the rest are parsed and decoded as ever.
        let direct: ((SourceLocation, Int, Int) -> JSONParser.ValueEnd?)? =
            decodesDirectly
            ? { location, lineStart, index in
                // The site alone, not in a tuple with where it ended: taking it out of one copied it.
                var end: JSONParser.ValueEnd?
                func decode(_ origins: DirectSiteDecoder.Origins) -> Site? {
                    let decoded = bytes.withUnsafeBufferPointer {
                        DirectSiteDecoder.decode(
                            $0,
                            at: location,
                            lineStart: lineStart,
                            path: JSONPath.rootIndex(index),
                            names: names,
                            origins: origins
                        )
                    }
                    end = decoded?.end
                    return decoded?.site
                }
                // A served site keeps no inner positions: the site is decoded with them only when building it
                // finds something they must name.
                if servingOnly {
                    guard let bare = decode(.siteAndHosts) else { return nil }
                    let (site, findings) = loaded(bare)
                    if findings.isEmpty {
                        built.sites.append(site)
                        return end
                    }
                }
                guard let decoded = decode(.everyValue) else { return nil }
                load(decoded)
                return end
            } : nil
        let parsed = JSONParser.parse(bytes, duplicateKeys: .error, directItem: direct) { node, index in
            build(node, at: JSONPath.rootIndex(index))
        }
        var findings = parsed.diagnostics.inFile(path)
        guard let root = parsed.root else { return IncludeState.File(path: path, stamp: stamp, sites: [], findings: findings) }
        if root.arrayValue != nil {
            // Built already, item by item.
        } else if root.objectValue != nil {
            build(root, at: .root)
        } else {
            findings.append(
                Diagnostic(
                    .error,
                    "include.not-sites",
                    "an included file holds one site object or an array of sites, found \(root.typeName)",
                    at: root.location,
                    path: "$",
                    file: path
                )
            )
        }
        findings += built.findings
        return IncludeState.File(path: path, stamp: stamp, sites: built.sites, findings: findings.withoutCascades(), digest: digest)
    }

    /// `dir/*.json` → the matching files, sorted; a pattern without wildcards names one file, which must exist.
    static func expand(_ pattern: String, access: IncludeAccess) -> Swift.Result<[String], IncludeError> {
        let slash = pattern.lastIndex(of: "/")
        let directory = slash.map { String(pattern[..<$0]) } ?? "."
        let namePattern = slash.map { String(pattern[pattern.index(after: $0)...]) } ?? pattern
        guard namePattern.contains("*") || namePattern.contains("?") else {
            return access.stamp(pattern) == nil
                ? .failure(IncludeError("included file \"\(pattern)\" does not exist")) : .success([pattern])
        }
        guard let names = access.list(directory) else {
            return .failure(IncludeError("cannot list the directory \"\(directory)\" of include \"\(pattern)\""))
        }
        // Editors' and deploy tools' temporary files start with '.'; they are never sites.
        let matching = names.filter { !$0.hasPrefix(".") && Glob.matches(namePattern, $0) }.sorted()
        return .success(matching.map { directory + "/" + $0 })
    }

    struct IncludeError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }
}

/// Shell-style file name patterns: `*` any run, `?` one character, everything else literal.
public enum Glob {
    public static func matches(_ pattern: String, _ name: String) -> Bool {
        let pattern = Array(pattern.utf8)
        let name = Array(name.utf8)
        var p = 0
        var n = 0
        var star: Int?
        var resume = 0
        while n < name.count {
            if p < pattern.count && (pattern[p] == UInt8(ascii: "?") || pattern[p] == name[n]) {
                p += 1
                n += 1
            } else if p < pattern.count && pattern[p] == UInt8(ascii: "*") {
                star = p
                resume = n
                p += 1
            } else if let star {
                p = star + 1
                resume += 1
                n = resume
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}
