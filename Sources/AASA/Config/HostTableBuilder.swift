import Support

/// Builds a loaded config's host → site-position table, and an error for each host a second site claims
/// (naming the first).
///
/// A million hosts inserted one by one took half a second on one core while the other waited. Large
/// tables are built in two steps instead: every file's exact hosts hashed and grouped by shard (files in
/// parallel), then the index's shards filled (shards in parallel). Within a shard names arrive in site order, so
/// the first site to claim a host keeps it, exactly as when inserting one by one.
enum HostTableBuilder {
    /// Below this many hosts one thread does it all: the parallel steps would cost more than they save.
    static let parallelThreshold = 1 << 16

    static func build(_ sites: SiteList, configPath: String, parallel: ParallelFor?) -> (table: HostTable<Int>, duplicates: [Diagnostic]) {
        guard let parallel, sites.hostCount >= parallelThreshold else { return sequential(sites, configPath: configPath) }
        let groups = sites.groups
        let groupPositions = groups.indices.map { sites.position(group: $0, offset: 0) }

        /// A host's names are read where its site keeps them, unretained: `sites` holds every site until the
        /// table is built, and a retained reference was five reference-count updates a host (appended,
        /// sorted, read, and each array freed), on objects the other core had just touched; only the table's
        /// own reference is counted.
        struct Hashed: @unchecked Sendable {
            let storage: Unmanaged<SiteHosts.Storage>
            let hash: UInt64
            let site: Int32
            let host: Int32

            var name: HostName { HostName(storage.takeUnretainedValue(), Int(host)) }
        }
        struct Wildcard: Sendable {
            let site: Int32
            let host: Int32
        }
        let shardBits = ExactHostIndex<Int>.shardBits(forExpectedCount: sites.hostCount)
        let shardCount = 1 << shardBits
        /// A file's exact hosts grouped by shard (in site order within each), and its wildcards.
        struct HashedGroup: Sendable {
            let exact: [Hashed]
            /// `exact[shardStarts[s]..<shardStarts[s + 1]]` belong to shard `s`.
            let shardStarts: [Int]
            let wildcards: [Wildcard]
        }
        let hashed = TaskSlots<HashedGroup>(count: groups.count)
        parallel(groups.count) { index in
            var exact: [Hashed] = []
            var wildcards: [Wildcard] = []
            exact.reserveCapacity(groups[index].hostCount)
            var perShard = [Int](repeating: 0, count: shardCount)
            for (site, loaded) in groups[index].sites.enumerated() {
                let hosts = loaded.site.hosts
                for host in hosts.indices {
                    if !hosts.isWildcard(host) {
                        let hash = ExactHostIndex<Int>.hash(hosts.nameBytes(host))
                        perShard[ExactHostIndex<Int>.shard(of: hash, shardBits: shardBits)] += 1
                        exact.append(
                            Hashed(storage: .passUnretained(hosts.storage), hash: hash, site: Int32(site), host: Int32(host))
                        )
                    } else {
                        wildcards.append(Wildcard(site: Int32(site), host: Int32(host)))
                    }
                }
            }
            // A stable counting sort by shard: each shard's task then reads one run per file.
            var shardStarts = [0]
            shardStarts.reserveCapacity(shardCount + 1)
            for count in perShard { shardStarts.append(shardStarts[shardStarts.count - 1] + count) }
            var next = shardStarts
            let sorted = [Hashed](unsafeUninitializedCapacity: exact.count) { buffer, initialized in
                for entry in exact {
                    let shard = ExactHostIndex<Int>.shard(of: entry.hash, shardBits: shardBits)
                    (buffer.baseAddress! + next[shard]).initialize(to: entry)
                    next[shard] += 1
                }
                initialized = exact.count
            }
            hashed[index] = HashedGroup(exact: sorted, shardStarts: shardStarts, wildcards: wildcards)
        }
        let perGroup = groups.indices.map { hashed[$0]! }
        let starts = groupPositions

        /// A host a later site claims again: where it is (in site order), and the position of the site
        /// that has it.
        struct Claim: Sendable {
            let group: Int
            let site: Int
            let host: Int
            let earlier: Int
        }
        let built = TaskSlots<(shard: ExactHostIndex<Int>.Shard, claims: [Claim])>(count: shardCount)
        parallel(shardCount) { shardIndex in
            var shard = ExactHostIndex<Int>.Shard(expectedCount: sites.hostCount / shardCount * 9 / 8)
            var claims: [Claim] = []
            for (group, entries) in perGroup.enumerated() {
                for entry in entries.shardStarts[shardIndex]..<entries.shardStarts[shardIndex + 1] {
                    let host = entries.exact[entry]
                    let position = starts[group] + Int(host.site)
                    if let earlier = shard.insertIfAbsent(host.name, hash: host.hash, position) {
                        claims.append(Claim(group: group, site: Int(host.site), host: Int(host.host), earlier: earlier))
                    }
                }
            }
            built[shardIndex] = (shard, claims)
        }
        let shards = (0..<shardCount).map { built[$0]!.shard }

        var table = HostTable<Int>(exact: ExactHostIndex(shards: shards, shardBits: shardBits))
        var claims = (0..<shardCount).flatMap { built[$0]!.claims }
        for (group, entries) in perGroup.enumerated() {
            for wildcard in entries.wildcards {
                let position = starts[group] + Int(wildcard.site)
                let hosts = groups[group].sites[Int(wildcard.site)].site.hosts
                if let earlier = table.insertIfAbsent(hosts, Int(wildcard.host), position) {
                    claims.append(Claim(group: group, site: Int(wildcard.site), host: Int(wildcard.host), earlier: earlier))
                }
            }
        }
        // In site order, as one-by-one insertion reports them.
        claims.sort { ($0.group, $0.site, $0.host) < ($1.group, $1.site, $1.host) }
        let duplicates = claims.map { claim in
            let site = groups[claim.group].sites[claim.site]
            return duplicateHost(
                site.site.hosts[claim.host],
                in: site,
                first: sites.site(atPosition: claim.earlier),
                configPath: configPath
            )
        }
        return (table, duplicates)
    }

    static func sequential(_ sites: SiteList, configPath: String) -> (table: HostTable<Int>, duplicates: [Diagnostic]) {
        var table = HostTable<Int>(capacity: sites.hostCount)
        var duplicates: [Diagnostic] = []
        for (group, sitesOfGroup) in sites.groups.enumerated() {
            for (offset, loaded) in sitesOfGroup.sites.enumerated() {
                let hosts = loaded.site.hosts
                for index in hosts.indices {
                    guard let earlier = table.insertIfAbsent(hosts, index, sites.position(group: group, offset: offset)) else {
                        continue
                    }
                    duplicates.append(
                        duplicateHost(hosts[index], in: loaded, first: sites.site(atPosition: earlier), configPath: configPath)
                    )
                }
            }
        }
        return (table, duplicates)
    }

    static func duplicateHost(_ host: Located<HostPattern>, in site: LoadedSite, first: LoadedSite, configPath: String) -> Diagnostic {
        let hosts = first.site.hosts
        let origin = hosts.indices.first { hosts.pattern($0) == host.value }.map { hosts[$0].origin } ?? first.site.origin
        let place = first.definedIn.map { " in \($0)" } ?? ""
        return Diagnostic(
            .error,
            "host.duplicate",
            "host \"\(host.value)\" is already served by the site at \(origin.path)\(place)"
                + (origin.location.map { " (line \($0.line))" } ?? "")
                + "; each host has exactly one document, so list it in one site only",
            at: host.origin.location,
            path: host.origin.path.description,
            file: site.definedIn ?? configPath
        )
    }
}
