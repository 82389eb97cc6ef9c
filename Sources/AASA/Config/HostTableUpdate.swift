extension HostTableBuilder {
    /// Host → site position, and an error for each host a second site claims (naming the first), taking
    /// the previous load's table over where it can (a table that was in force had no duplicates):
    /// - as it is when the groups are the same, or a changed group serves the same hosts in the same
    ///   slot, site by site (an edit that changed no host). Groups taken over whole are not looked into;
    /// - updated for the hosts of the groups that left and came (a file added, removed, or edited
    ///   with other hosts) when those are few: groups keep their slots, so no other host moves;
    /// - otherwise, or when a new host is claimed already, built anew.
    static func build(
        _ sites: SiteList,
        configPath: String,
        reusing previous: (sites: SiteList, table: HostTable<Int>)?,
        parallel: ParallelFor? = nil
    ) -> (table: HostTable<Int>, duplicates: [Diagnostic]) {
        guard let previous else { return build(sites, configPath: configPath, parallel: parallel) }
        let kept = Set(sites.groups.map(ObjectIdentifier.init))
        var previousPosition: [ObjectIdentifier: Int] = [:]
        for index in previous.sites.groups.indices {
            previousPosition[ObjectIdentifier(previous.sites.groups[index])] = previous.sites.position(group: index, offset: 0)
        }
        let removed = previous.sites.groups.indices.filter { !kept.contains(ObjectIdentifier(previous.sites.groups[$0])) }
        let added = sites.groups.indices.filter { previousPosition[ObjectIdentifier(sites.groups[$0])] == nil }
        // Groups taken over keep their slots (SiteList(keepingSlotsOf:)); a list built otherwise may not.
        let slotsKept = sites.groups.indices.allSatisfy { index in
            previousPosition[ObjectIdentifier(sites.groups[index])].map { $0 == sites.position(group: index, offset: 0) } ?? true
        }
        guard slotsKept else { return build(sites, configPath: configPath, parallel: parallel) }
        if removed.isEmpty && added.isEmpty { return (previous.table, []) }
        // The common edit: each changed group replaces one in the same slot with the same hosts, site by site.
        if removed.count == added.count,
            added.allSatisfy({ index in
                let position = sites.position(group: index, offset: 0)
                return removed.contains { old in
                    let before = previous.sites.groups[old]
                    let after = sites.groups[index]
                    return previous.sites.position(group: old, offset: 0) == position
                        && before.sites.count == after.sites.count
                        && zip(before.sites, after.sites).allSatisfy {
                            $0 === $1 || $0.site.hosts.hasSamePatterns(as: $1.site.hosts)
                        }
                }
            })
        {
            return (previous.table, [])
        }
        let changing = removed.reduce(0) { $0 + previous.sites.groups[$1].hostCount } + added.reduce(0) { $0 + sites.groups[$1].hostCount }
        guard changing * 16 <= sites.hostCount else { return build(sites, configPath: configPath, parallel: parallel) }
        var table = previous.table
        for group in removed {
            for (offset, loaded) in previous.sites.groups[group].sites.enumerated() {
                let position = previous.sites.position(group: group, offset: offset)
                let hosts = loaded.site.hosts
                for index in hosts.indices { table.remove(hosts.pattern(index), ifAt: position) }
            }
        }
        for group in added {
            for (offset, loaded) in sites.groups[group].sites.enumerated() {
                let position = sites.position(group: group, offset: offset)
                let hosts = loaded.site.hosts
                for index in hosts.indices where table.insertIfAbsent(hosts, index, position) != nil {
                    // Claimed twice: the full build names the first claim as it always does.
                    return build(sites, configPath: configPath, parallel: parallel)
                }
            }
        }
        return (table, [])
    }
}
