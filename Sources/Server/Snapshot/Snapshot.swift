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
            let headers: DocumentHeaders
            var assetLinksStamp: (lastModified: Int, headers: DocumentHeaders)?
        }
        enum Plan: Sendable {
            case carried(SiteResponses)
            case build(ToBuild)
            /// Nothing to compare with (the first load, a new file): everything is worked out in parallel,
            /// stamped with `stamp` (the load time, or on the first load the time its files last changed).
            case fresh(LoadedSite, stamp: Int)
        }
        /// A group compared site by site: its plans, and what it was compared with.
        struct Rebuilt {
            let group: Int
            let plans: Range<Int>
            let previousSites: [SiteResponses]
            let previousCarried: [Bool]
        }
        var carriedGroups: [ResponseGroup?] = Array(repeating: nil, count: sites.groups.count)
        var rebuilt: [Rebuilt] = []
        var plans: [Plan] = []
        // Most sites share one Last-Modified (the load time): the header lines of each distinct second are
        // made once and shared by every document stamped with it.
        var headerBlocks: [Int: DocumentHeaders] = [:]
        func headers(_ stamp: Int) -> DocumentHeaders {
            if let block = headerBlocks[stamp] { return block }
            let block = DocumentHeaders(cacheControl: cacheControl, lastModified: stamp)
            headerBlocks[stamp] = block
            return block
        }
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
                // The first load stamps a document with when its files last changed, not the start time: a
                // restart must not tell every cache that every document just changed.
                let groupStamp = firstStamps.map { min(Int(now), $0.stamp(group: group)) } ?? Int(now)
                if firstStamps != nil { _ = headers(groupStamp) }
                for loaded in group.sites {
                    var stamp = groupStamp
                    if let firstStamps, loaded.file != nil || loaded.assetLinks?.file != nil {
                        stamp = min(Int(now), max(groupStamp, firstStamps.stamp(site: loaded)))
                        _ = headers(stamp)
                    }
                    // A version the state directory saw first served: exactly then, each document on its own.
                    if let recorded = firstStamps?.recorded[ObjectIdentifier(loaded)] {
                        let aasa = min(Int(now), recorded.aasa ?? stamp)
                        var planned = ToBuild(loaded: loaded, stamp: aasa, headers: headers(aasa))
                        if loaded.assetLinks != nil {
                            let assetLinks = min(Int(now), recorded.assetLinks ?? stamp)
                            planned.assetLinksStamp = (assetLinks, headers(assetLinks))
                        }
                        plans.append(.build(planned))
                        continue
                    }
                    plans.append(.fresh(loaded, stamp: stamp))
                }
                rebuilt.append(Rebuilt(group: groupIndex, plans: first..<plans.count, previousSites: [], previousCarried: []))
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
                    var planned = ToBuild(loaded: loaded, stamp: stamp, headers: headers(stamp))
                    // Each document keeps its own Last-Modified: assetlinks.json unchanged beside an edited AASA keeps its.
                    if let bytes = loaded.assetLinks?.bytes {
                        let before = previousIndex.map { previousSites[$0] }
                        let same = before.map { Self.sameAssetLinks($0.assetLinks, bytes) } ?? false
                        let assetStamp = same ? before!.assetLinksLastModified : Int(now)
                        if assetStamp != stamp { planned.assetLinksStamp = (assetStamp, headers(assetStamp)) }
                    }
                    plans.append(.build(planned))
                }
            }
            rebuilt.append(
                Rebuilt(group: groupIndex, plans: first..<plans.count, previousSites: previousSites, previousCarried: previousCarried)
            )
        }

        let decided = plans
        _ = headers(Int(now))
        let stampedHeaders = headerBlocks
        let buildOne: @Sendable (Int) -> SiteResponses = { index in
            let site: ToBuild
            switch decided[index] {
            case .carried(let responses): return responses
            case .fresh(let loaded, let stamp):
                site = ToBuild(loaded: loaded, stamp: stamp, headers: stampedHeaders[stamp]!)
            case .build(let planned): site = planned
            }
            return SiteResponses(
                builtFrom: site.loaded,
                headers: site.headers,
                servesApple: site.loaded.servesApple,
                assetLinks: site.loaded.assetLinks?.bytes,
                assetLinksStamp: site.assetLinksStamp
            )
        }
        let toBuild = plans.count { if case .carried = $0 { false } else { true } }
        let responses = toBuild >= 256 ? Posix.parallelMap(plans.count, buildOne) : plans.indices.map(buildOne)

        // Carried-over sites have the same hosts and bytes on both sides, and a host belongs to one site, so
        // only the others can hold added, removed or changed hosts. A site with the same hosts at the same
        // position as before is compared directly; only the rest need a lookup by host.
        var changes = SnapshotChanges()
        var unmatchedBefore: [SiteResponses] = []
        var unmatchedAfter: [SiteResponses] = []
        for group in rebuilt {
            let groupResponses = Array(responses[group.plans])
            carriedGroups[group.group] = ResponseGroup(builtFrom: sites.groups[group.group], responses: groupResponses)
            guard previous != nil else { continue }
            var paired = group.previousCarried
            for (position, site) in groupResponses.enumerated() {
                if case .carried = plans[group.plans.lowerBound + position] { continue }
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
