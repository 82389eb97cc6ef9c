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
    let sites: [SiteResponses]
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

    /// Builds every response for `config`. `previous` supplies `Last-Modified` for documents that did not
    /// change; `now` is the time a changed document is stamped with.
    init(
        config: LoadedConfig,
        settings: ServerSettings,
        tls: TLSContexts? = nil,
        adminPolicy: AdminPolicy = AdminPolicy(),
        generation: Int,
        now: Double,
        previous: Snapshot? = nil
    ) {
        self.tls = tls
        self.adminPolicy = adminPolicy
        self.generation = generation
        loadedAt = now
        // The usual reload at scale: almost every site is the very object the previous snapshot was built
        // from, so its responses are shared as they are and only the others are built.
        var builtSites: [SiteResponses]
        var builtChanges: SnapshotChanges
        let hostTable: HostTable<Int>
        if let previous, let incremental = Self.incremental(config, settings: settings, previous: previous, now: now) {
            hostTable = config.hostTable
            builtSites = incremental.sites
            builtChanges = incremental.changes
        } else {
            let previousSites = previous?.sites ?? []
            var previousByLabel: [String: Int]?
            var carriedOver = [Bool](repeating: false, count: previousSites.count)
            var isCarriedOver: [Bool] = []
            isCarriedOver.reserveCapacity(config.sites.count)
            // Decided in order (carried over, or to build with which Last-Modified), then built in parallel:
            // building a site's responses (headers, ETag, gzip) is independent of every other site.
            struct ToBuild: Sendable {
                let label: String
                let loaded: LoadedSite
                let hash: UInt64
                let stamp: Int
                let dateText: String
            }
            enum Plan: Sendable {
                case carried(SiteResponses)
                case build(ToBuild)
            }
            var plans: [Plan] = []
            plans.reserveCapacity(config.sites.count)
            // Most sites share one Last-Modified (the load time); format each distinct second once.
            var dateTexts: [Int: String] = [:]
            for loaded in config.sites {
                let position = plans.count
                // A site the loader carried over unchanged is the very same object: its responses carry over.
                if position < previousSites.count, previousSites[position].builtFrom === loaded,
                    previousSites[position].cacheControl == settings.cacheControl
                {
                    plans.append(.carried(previousSites[position]))
                    carriedOver[position] = true
                    isCarriedOver.append(true)
                    continue
                }
                let label = loaded.site.name
                let hash = FNV1a.hash(loaded.bytes)
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
                let hosts = loaded.site.hosts
                if let unchanged, let previousIndex, unchanged.cacheControl == settings.cacheControl, unchanged.hosts.count == hosts.count,
                    zip(unchanged.hosts, hosts).allSatisfy({ $0 == $1.value }),
                    unchanged.identity.rest[unchanged.identity.bodyOffset...].elementsEqual(loaded.bytes),
                    unchanged.servesApple == loaded.servesApple,
                    Self.sameAssetLinks(unchanged.assetLinks, loaded.assetLinks?.bytes)
                {
                    // Same hosts, same bytes, same headers: the prepared responses (and their gzip) carry over.
                    plans.append(.carried(unchanged.builtFrom === loaded ? unchanged : SiteResponses(unchanged, builtFrom: loaded)))
                    carriedOver[previousIndex] = true
                    isCarriedOver.append(true)
                } else {
                    let stamp = unchanged?.lastModified ?? Int(now)
                    let dateText = dateTexts[stamp] ?? HTTPDate.format(unixSeconds: stamp)
                    dateTexts[stamp] = dateText
                    plans.append(.build(ToBuild(label: label, loaded: loaded, hash: hash, stamp: stamp, dateText: dateText)))
                    isCarriedOver.append(false)
                }
            }
            let cacheControl = settings.cacheControl
            let decided = plans
            let build: @Sendable (Int) -> SiteResponses = { index in
                switch decided[index] {
                case .carried(let responses): return responses
                case .build(let site):
                    return SiteResponses(
                        label: site.label,
                        hosts: site.loaded.site.hosts.map(\.value),
                        builtFrom: site.loaded,
                        body: site.loaded.bytes,
                        cacheControl: cacheControl,
                        lastModified: site.stamp,
                        lastModifiedText: site.dateText,
                        hash: site.hash,
                        servesApple: site.loaded.servesApple,
                        assetLinks: site.loaded.assetLinks?.bytes
                    )
                }
            }
            let toBuild = isCarriedOver.count { !$0 }
            let sites = toBuild >= 256 ? Posix.parallelMap(plans.count, build) : plans.indices.map(build)
            hostTable = config.hostTable
            builtSites = sites
            // Carried-over sites have the same hosts and bytes on both sides, and a host belongs to one site,
            // so only the others can hold added, removed or changed hosts. A site with the same hosts at the
            // same position as before is compared directly; only the rest need a lookup by host.
            var changes = SnapshotChanges()
            if previous != nil {
                var paired = carriedOver
                var unmatched: [SiteResponses] = []
                for (position, site) in sites.enumerated() where !isCarriedOver[position] {
                    if position < previousSites.count, !paired[position], previousSites[position].hosts == site.hosts {
                        paired[position] = true
                        if previousSites[position].contentHash != site.contentHash {
                            for host in site.hosts { changes.changed.add(host.description) }
                        }
                    } else {
                        unmatched.append(site)
                    }
                }
                changes.compare(before: zip(previousSites, paired).filter { !$0.1 }.map(\.0), after: unmatched)
            }
            builtChanges = changes
        }
        hosts = hostTable
        self.sites = builtSites
        self.changes = builtChanges
        if config.config?.unknownHost == .notFound {
            unknownHost = nil
        } else {
            let stamp = previous?.unknownHost?.lastModified ?? Int(now)
            unknownHost = SiteResponses(
                label: "unknown",
                hosts: [],
                builtFrom: nil,
                body: LoadedConfig.emptyDocumentBytes,
                cacheControl: settings.cacheControl,
                lastModified: stamp
            )
        }
        healthPath = settings.healthPath.map { Array($0.utf8) }
        published = settings.publishedFiles.map { file in
            let headers = [("Server", "aasa-server"), ("Content-Type", file.contentType), ("Cache-Control", "no-store")]
            return (Array(file.path.utf8), PreparedResponse(status: 200, headers: headers, body: file.body))
        }
    }

    static func sameAssetLinks(_ prepared: PreparedDocument?, _ bytes: [UInt8]?) -> Bool {
        switch (prepared, bytes) {
        case (nil, nil): return true
        case (let prepared?, let bytes?): return prepared.identity.rest[prepared.identity.bodyOffset...].elementsEqual(bytes)
        default: return false
        }
    }

    /// When the config has as many sites as the previous snapshot and all but a few (at most 256, or one
    /// in sixteen) are the objects it was built from: the previous responses with those few rebuilt.
    /// Nil otherwise.
    static func incremental(
        _ config: LoadedConfig,
        settings: ServerSettings,
        previous: Snapshot,
        now: Double
    ) -> (sites: [SiteResponses], changes: SnapshotChanges)? {
        let before = previous.sites
        guard before.count == config.sites.count, before.first?.cacheControl ?? settings.cacheControl == settings.cacheControl else {
            return nil
        }
        var changedPositions: [Int] = []
        let limit = max(256, before.count / 16)
        for (position, loaded) in config.sites.enumerated() where before[position].builtFrom !== loaded {
            changedPositions.append(position)
            if changedPositions.count > limit { return nil }
        }
        var sites = before
        var changes = SnapshotChanges()
        for position in changedPositions {
            let loaded = config.sites[position]
            let old = before[position]
            let hash = FNV1a.hash(loaded.bytes)
            let hosts = loaded.site.hosts.map(\.value)
            let site: SiteResponses
            if old.hosts == hosts, old.bodyHash == hash, old.servesApple == loaded.servesApple,
                old.identity.rest[old.identity.bodyOffset...].elementsEqual(loaded.bytes),
                sameAssetLinks(old.assetLinks, loaded.assetLinks?.bytes)
            {
                site = SiteResponses(old, builtFrom: loaded)
            } else {
                site = SiteResponses(
                    label: loaded.site.name,
                    hosts: hosts,
                    builtFrom: loaded,
                    body: loaded.bytes,
                    cacheControl: settings.cacheControl,
                    lastModified: old.label == loaded.site.name && old.bodyHash == hash ? old.lastModified : Int(now),
                    hash: hash,
                    servesApple: loaded.servesApple,
                    assetLinks: loaded.assetLinks?.bytes
                )
            }
            sites[position] = site
            if old.hosts == site.hosts {
                if old.contentHash != site.contentHash { for host in site.hosts { changes.changed.add(host.description) } }
            } else {
                changes.compare(before: [old], after: [site])
            }
        }
        return (sites, changes)
    }
}
