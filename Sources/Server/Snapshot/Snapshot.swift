import AASA
import HTTP1
import Posix
import TLS

/// The configuration in force: immutable, built completely before it is published, swapped atomically.
///
/// A request takes the snapshot once and is answered entirely from it, so a reload can never mix the
/// headers of one config with the body of another.
final class Snapshot: Sendable {
    let generation: Int
    let loadedAt: Double
    let hosts: HostTable<Int>
    /// One per group of the config's sites, in the same order: a reload carries every group the loader
    /// took over into the next snapshot as it is.
    let groups: [ResponseGroup]
    /// The sites these responses were built from: positions (the host table's values) are theirs.
    let layout: SiteList
    let cacheControl: String
    /// Nil when `unknownHost` is "404".
    let unknownHost: SiteResponses?
    let healthPath: [UInt8]?
    /// `settings.publishedFiles`, ready to send: a handful at most, so a scan finds them.
    let published: [(path: [UInt8], response: PreparedResponse)]
    /// What changed from the snapshot this one replaced (all hosts added for the first).
    let changes: SnapshotChanges
    /// Certificates for TLS listeners; swapped with the rest of the config on reload.
    let tls: TLSContexts?
    /// Who may use the admin listener for what (the token rotates with a reload).
    let adminPolicy: AdminPolicy

    /// The responses of the site at `position` (a host table value).
    func site(at position: Int) -> SiteResponses {
        let (group, offset) = layout.locate(position: position)
        return groups[group].responses[offset]
    }

    /// `body` with the site at `position`, unretained: the snapshot keeps it for as long as it lives, and a
    /// link's answer reads it across calls that kept the optimizer from dropping a retain and a release.
    @inline(__always)
    func withSite<Result>(at position: Int, _ body: (SiteResponses) -> Result) -> Result {
        let (group, offset) = layout.locate(position: position)
        return Unmanaged.passUnretained(groups[group].responses[offset])._withUnsafeGuaranteedRef(body)
    }

    /// ``SiteResponses/appleResponse(gzip:)`` of the site at `position`, read where the snapshot keeps it:
    /// taking the site's responses out retained and released them, two atomic operations a request.
    @inline(__always)
    func appleResponse(at position: Int, gzip: Bool) -> PreparedResponse? {
        let (group, offset) = layout.locate(position: position)
        return groups[group].responses[offset].appleResponse(gzip: gzip)
    }

    /// The responses of the site at `position`, or nil when no site has it: for the admin pages, which
    /// answer 500 for a wrong position instead of stopping every listener with the process.
    func siteIfPresent(at position: Int) -> SiteResponses? {
        guard let (group, offset) = layout.locateIfPresent(position: position), group < groups.count,
            offset < groups[group].responses.count
        else { return nil }
        return groups[group].responses[offset]
    }

    /// Builds every response for `config`. `previous` supplies `Last-Modified` for documents that did not
    /// change; `now` is the time a changed document is stamped with.
    init(
        config: LoadedConfig,
        settings: ServerSettings,
        tls: TLSContexts? = nil,
        adminPolicy: AdminPolicy = AdminPolicy(),
        generation: Int,
        now: Double,
        previous: Snapshot? = nil,
        firstStamps: FirstLoadStamps? = nil
    ) {
        self.tls = tls
        self.adminPolicy = adminPolicy
        self.generation = generation
        loadedAt = now
        cacheControl = settings.cacheControl
        layout = config.sites
        hosts = config.hostTable
        let built = Self.build(config.sites, cacheControl: settings.cacheControl, previous: previous, now: now, firstStamps: firstStamps)
        groups = built.groups
        changes = built.changes
        if config.config?.unknownHost == .notFound {
            unknownHost = nil
        } else {
            let stamp = previous?.unknownHost?.lastModified ?? firstStamps.map { min(Int(now), $0.configTime) } ?? Int(now)
            unknownHost = SiteResponses(builtFrom: nil, headers: DocumentHeaders(cacheControl: settings.cacheControl, lastModified: stamp))
        }
        healthPath = settings.healthPath.map { Array($0.utf8) }
        published = settings.publishedFiles.map { file in
            let headers = [("Server", "aasa-server"), ("Content-Type", file.contentType), ("Cache-Control", "no-store")]
            return (Array(file.path.utf8), PreparedResponse(status: 200, headers: headers, body: file.body))
        }
    }

    /// The responses for every group of `sites`. A group the loader took over (the same object) keeps its
    /// responses without looking into it, so a reload where one included file changed costs that file's
    /// sites, whatever the number of hosts. Every other group is compared site by site with the previous
    /// group of the same file: a site that is the same object, or has the same hosts and bytes, keeps its
    /// prepared responses (and their gzip); the rest are built, in parallel when there are many.
    private static func build(
        _ sites: SiteList,
        cacheControl: String,
        previous: Snapshot?,
        now: Double,
        firstStamps: FirstLoadStamps?
    ) -> (groups: [ResponseGroup], changes: SnapshotChanges) {
        let previousGroups = previous?.groups ?? []
        // Responses carry over only with the same headers; with others only Last-Modified does.
        let sameHeaders = previous?.cacheControl == cacheControl
        var previousByIdentity: [ObjectIdentifier: Int] = [:]
        var previousBySource: [String?: Int] = [:]
        for (index, group) in previousGroups.enumerated() {
            previousByIdentity[ObjectIdentifier(group.builtFrom)] = index
            if previousBySource[group.builtFrom.source] == nil { previousBySource[group.builtFrom.source] = index }
        }
        var previousUsed = [Bool](repeating: false, count: previousGroups.count)

        struct ToBuild: Sendable {
            let loaded: LoadedSite
            let stamp: Int
            var assetLinksStamp: Int?
        }
        enum Plan: Sendable {
            case carried(SiteResponses)
            case build(ToBuild)
        }
        /// A group whose responses are built here: from scratch when there is nothing to compare it with
        /// (the first load, a new file; `freshStamp` is then the load time, or on the first load the time
        /// its files last changed), otherwise site by site as `plans` says.
        struct Rebuilt: Sendable {
            let group: Int
            let sites: [LoadedSite]
            /// Where its sites start among all the sites built here.
            let start: Int
            let freshStamp: Int?
            let plans: Range<Int>
            let previousSites: [SiteResponses]
            let previousCarried: [Bool]
        }
        var carriedGroups: [ResponseGroup?] = Array(repeating: nil, count: sites.groups.count)
        var rebuilt: [Rebuilt] = []
        var plans: [Plan] = []
        var total = 0
        var toBuild = 0
        for (groupIndex, group) in sites.groups.enumerated() {
            let candidate = previousByIdentity[ObjectIdentifier(group)] ?? previousBySource[group.source]
            let match = candidate.flatMap { previousUsed[$0] ? nil : $0 }
            if let match { previousUsed[match] = true }
            if let match, sameHeaders, previousGroups[match].builtFrom === group {
                carriedGroups[groupIndex] = previousGroups[match]
                continue
            }
            let first = plans.count
            guard let match else {
                // Each site is worked out where it is built, in parallel: a pass here over a million sites
                // took each one from memory once more.
                // The first load stamps a document with when its files last changed, not the start time: a
                // restart must not tell every cache that every document just changed.
                let groupStamp = firstStamps.map { min(Int(now), $0.stamp(group: group)) } ?? Int(now)
                rebuilt.append(
                    Rebuilt(
                        group: groupIndex,
                        sites: group.sites,
                        start: total,
                        freshStamp: groupStamp,
                        plans: first..<first,
                        previousSites: [],
                        previousCarried: []
                    )
                )
                total += group.sites.count
                toBuild += group.sites.count
                continue
            }
            let previousSites = previousGroups[match].responses
            var previousCarried = [Bool](repeating: false, count: previousSites.count)
            var previousByLabel: [String: Int]?
            for (position, loaded) in group.sites.enumerated() {
                // A site the loader carried over unchanged is the very same object: its responses carry over.
                if sameHeaders, position < previousSites.count, previousSites[position].builtFrom === loaded {
                    plans.append(.carried(previousSites[position]))
                    previousCarried[position] = true
                    continue
                }
                let label = loaded.label
                let hash = loaded.served.hash
                // Sites usually keep their order across reloads; look up by label only when they did not.
                var previousIndex: Int?
                if position < previousSites.count && previousSites[position].label == label {
                    previousIndex = position
                } else if !previousSites.isEmpty {
                    if previousByLabel == nil {
                        var byLabel: [String: Int] = [:]
                        for (index, site) in previousSites.enumerated() { byLabel[site.label] = index }
                        previousByLabel = byLabel
                    }
                    previousIndex = previousByLabel?[label]
                }
                let unchanged = previousIndex.flatMap { previousSites[$0].bodyHash == hash ? previousSites[$0] : nil }
                if sameHeaders, let unchanged, let previousIndex, !previousCarried[previousIndex],
                    unchanged.builtFrom.map({ Self.sameHosts($0, loaded) }) == true,
                    unchanged.identity.bodyBytes.elementsEqual(loaded.served.buffer),
                    unchanged.servesApple == loaded.servesApple,
                    sameAssetLinks(unchanged.assetLinks, loaded.assetLinks?.bytes)
                {
                    // Same hosts, same bytes, same headers: the prepared responses (and their gzip) carry over.
                    plans.append(.carried(unchanged.builtFrom === loaded ? unchanged : SiteResponses(unchanged, builtFrom: loaded)))
                    previousCarried[previousIndex] = true
                } else {
                    let stamp = unchanged?.lastModified ?? Int(now)
                    var planned = ToBuild(loaded: loaded, stamp: stamp)
                    // Each document keeps its own Last-Modified: assetlinks.json unchanged beside an edited AASA keeps its.
                    if let bytes = loaded.assetLinks?.bytes {
                        let before = previousIndex.map { previousSites[$0] }
                        let same = before.map { Self.sameAssetLinks($0.assetLinks, bytes) } ?? false
                        let assetStamp = same ? before!.assetLinksLastModified : Int(now)
                        if assetStamp != stamp { planned.assetLinksStamp = assetStamp }
                    }
                    plans.append(.build(planned))
                    toBuild += 1
                }
            }
            rebuilt.append(
                Rebuilt(
                    group: groupIndex,
                    sites: group.sites,
                    start: total,
                    freshStamp: nil,
                    plans: first..<plans.count,
                    previousSites: previousSites,
                    previousCarried: previousCarried
                )
            )
            total += group.sites.count
        }

        let decided = plans
        let runs = rebuilt
        /// A site with nothing to compare with: stamped as its group, unless it hosts a file of its own that
        /// changed later, or the state directory saw the version it serves first served (exactly then).
        @Sendable func plan(fresh loaded: LoadedSite, groupStamp: Int) -> ToBuild {
            guard let firstStamps else { return ToBuild(loaded: loaded, stamp: groupStamp) }
            var stamp = groupStamp
            if loaded.file != nil || loaded.assetLinks?.file != nil {
                stamp = min(Int(now), max(groupStamp, firstStamps.stamp(site: loaded)))
            }
            guard let recorded = firstStamps.recorded[ObjectIdentifier(loaded)] else { return ToBuild(loaded: loaded, stamp: stamp) }
            var planned = ToBuild(loaded: loaded, stamp: min(Int(now), recorded.aasa ?? stamp))
            if loaded.assetLinks != nil { planned.assetLinksStamp = min(Int(now), recorded.assetLinks ?? stamp) }
            return planned
        }
        // Each group's responses are written straight into a buffer of its own and moved into its array:
        // one array for all and a copy per group took every site's counter, cold, twice more.
        let outputs = ResponseBuffers(runs.map { UnsafeMutablePointer<SiteResponses>.allocate(capacity: $0.sites.count) })
        // Most sites share one Last-Modified (the load time): the header lines of each distinct second are
        // made once and shared by every document stamped with it, once per building thread: lines every
        // thread shared had their reference count taken from one core by the other for each site.
        struct Local {
            var headerBlocks: [Int: DocumentHeaders] = [:]
            /// The run the last index was in: a thread takes consecutive indices.
            var run = 0
        }
        let buildOne: @Sendable (inout Local, Int) -> Void = { local, index in
            var run = local.run
            if index < runs[run].start || index >= runs[run].start + runs[run].sites.count {
                // Binary search: the last run starting at or before `index`.
                var low = 0
                var high = runs.count - 1
                while low < high {
                    let middle = (low + high + 1) / 2
                    if runs[middle].start <= index { low = middle } else { high = middle - 1 }
                }
                run = low
                local.run = low
            }
            let offset = index - runs[run].start
            let site: ToBuild
            if let groupStamp = runs[run].freshStamp {
                site = plan(fresh: runs[run].sites[offset], groupStamp: groupStamp)
            } else {
                switch decided[runs[run].plans.lowerBound + offset] {
                case .carried(let responses):
                    (outputs.pointers[run] + offset).initialize(to: responses)
                    return
                case .build(let planned): site = planned
                }
            }
            func headers(_ stamp: Int) -> DocumentHeaders {
                if let block = local.headerBlocks[stamp] { return block }
                let block = DocumentHeaders(cacheControl: cacheControl, lastModified: stamp)
                local.headerBlocks[stamp] = block
                return block
            }
            let responses = SiteResponses(
                builtFrom: site.loaded,
                headers: headers(site.stamp),
                servesApple: site.loaded.servesApple,
                assetLinks: site.loaded.assetLinks?.bytes,
                assetLinksStamp: site.assetLinksStamp.map { ($0, headers($0)) }
            )
            (outputs.pointers[run] + offset).initialize(to: responses)
        }
        if toBuild >= 256 {
            Posix.parallelFor(total, local: { Local() }, buildOne)
        } else {
            var local = Local()
            for index in 0..<total { buildOne(&local, index) }
        }
        var builtGroups: [[SiteResponses]] = []
        builtGroups.reserveCapacity(runs.count)
        for (run, output) in zip(runs, outputs.pointers) {
            let count = run.sites.count
            builtGroups.append(
                Array(unsafeUninitializedCapacity: count) { buffer, initialized in
                    if count > 0 { buffer.baseAddress!.moveInitialize(from: output, count: count) }
                    initialized = count
                }
            )
            output.deallocate()
        }

        // Carried-over sites have the same hosts and bytes on both sides, and a host belongs to one site, so
        // only the others can hold added, removed or changed hosts. A site with the same hosts at the same
        // position as before is compared directly; only the rest need a lookup by host.
        var changes = SnapshotChanges()
        var unmatchedBefore: [SiteResponses] = []
        var unmatchedAfter: [SiteResponses] = []
        for (group, groupResponses) in zip(runs, builtGroups) {
            carriedGroups[group.group] = ResponseGroup(builtFrom: sites.groups[group.group], responses: groupResponses)
            guard previous != nil else { continue }
            var paired = group.previousCarried
            for (position, site) in groupResponses.enumerated() {
                if group.freshStamp == nil, case .carried = plans[group.plans.lowerBound + position] { continue }
                if position < group.previousSites.count, !paired[position], group.previousSites[position].hasSameHosts(as: site) {
                    paired[position] = true
                    if group.previousSites[position].contentHash != site.contentHash {
                        for host in site.hosts { changes.changed.add(host.description) }
                    }
                } else {
                    unmatchedAfter.append(site)
                }
            }
            unmatchedBefore += zip(group.previousSites, paired).filter { !$0.1 }.map(\.0)
        }
        if previous != nil {
            // A file removed: its hosts are gone, or moved to another file.
            for (index, group) in previousGroups.enumerated() where !previousUsed[index] { unmatchedBefore += group.responses }
            changes.compare(before: unmatchedBefore, after: unmatchedAfter)
        }
        return (carriedGroups.map { $0! }, changes)
    }

    /// What an unknown host gets (unless `unknownHost` is "404").
    static let emptyDocument = ImmutableBytes.copy(LoadedConfig.emptyDocumentBytes)

    static func sameHosts(_ one: LoadedSite, _ other: LoadedSite) -> Bool {
        one.site.hosts.hasSamePatterns(as: other.site.hosts)
    }

    static func sameAssetLinks(_ prepared: PreparedDocument?, _ bytes: [UInt8]?) -> Bool {
        switch (prepared, bytes) {
        case (nil, nil): return true
        case (let prepared?, let bytes?): return prepared.identity.bodyBytes.elementsEqual(bytes)
        default: return false
        }
    }
}

/// Each group's responses while they are built: every slot is written once, by one thread, before the
/// buffers are read (unchecked Sendable for that reason).
private struct ResponseBuffers: @unchecked Sendable {
    let pointers: [UnsafeMutablePointer<SiteResponses>]

    init(_ pointers: [UnsafeMutablePointer<SiteResponses>]) { self.pointers = pointers }
}
