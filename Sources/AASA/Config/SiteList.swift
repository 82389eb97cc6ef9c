/// Every site of a loaded config, in groups: the config's own sites, then one group per included file.
///
/// A reload builds a new group only for a file that changed and takes the others over as the very same
/// objects, so handing a million sites from one load to the next costs a pointer per file, not a
/// reference-count update (and a cache miss) per site. Positions are flat, as in one array: the host
/// table maps a host to its site's position.
public struct SiteList: RandomAccessCollection, Sendable, ExpressibleByArrayLiteral {
    /// Sites loaded together from one file; immutable, so the next load may take it over whole.
    public final class Group: Sendable {
        public let sites: [LoadedSite]
        /// The included file the sites are written in; nil for the config's own sites.
        public let source: String?
        public let hostCount: Int
        /// The files the sites host verbatim (AASA and assetlinks) and their landing page templates: what a
        /// reload must watch.
        public let hostedFiles: [String]
        /// Sites with link rules, and sites serving a hosted document as it is: counted here, while the
        /// loading thread still has the sites in its cache, so the questions asked of the whole list later
        /// ("does any site have link rules?") skip the groups without any instead of visiting every site.
        public let linkSiteCount: Int
        public let hostedDocumentCount: Int

        public init(_ sites: [LoadedSite], source: String? = nil) {
            self.sites = sites
            self.source = source
            // One pass, no array per site: a million sites go through here on every load.
            var hosts = 0
            var files: [String] = []
            var linkSites = 0
            var hostedDocuments = 0
            for loaded in sites {
                hosts += loaded.site.hosts.count
                if let file = loaded.file { files.append(file) }
                if let file = loaded.assetLinks?.file { files.append(file) }
                if let file = loaded.landingPage?.file { files.append(file) }
                if loaded.site.links != nil { linkSites += 1 }
                if loaded.hosted != nil { hostedDocuments += 1 }
            }
            hostCount = hosts
            hostedFiles = files
            linkSiteCount = linkSites
            hostedDocumentCount = hostedDocuments
        }
    }

    public let groups: [Group]
    /// Where each group's first site is in the flat order, then the count.
    private let starts: [Int]
    public let hostCount: Int
    /// Each group's slot. The host table maps a host to a *position*, `slot << 32 | offset in its
    /// group`: a group keeps its slot from one load to the next, so adding or removing a file changes
    /// no other file's positions, and the table needs updating only for that file's hosts.
    private let slots: [Int]
    /// Slot → group index (-1: free).
    private let groupBySlot: [Int]

    /// `previous`: the list these groups replace. A group taken over keeps its slot; a new group from a
    /// file that had one takes that file's slot; the rest take the lowest free slots.
    public init(groups: [Group], keepingSlotsOf previous: SiteList? = nil) {
        self.groups = groups
        var starts: [Int] = [0]
        starts.reserveCapacity(groups.count + 1)
        for group in groups { starts.append(starts[starts.count - 1] + group.sites.count) }
        self.starts = starts
        hostCount = groups.reduce(0) { $0 + $1.hostCount }
        var slots = [Int](repeating: -1, count: groups.count)
        if let previous, !previous.groups.isEmpty {
            var slotOf: [ObjectIdentifier: Int] = [:]
            var slotOfSource: [String?: Int] = [:]
            for (index, group) in previous.groups.enumerated() {
                slotOf[ObjectIdentifier(group)] = previous.slots[index]
                slotOfSource[group.source] = previous.slots[index]
            }
            var taken = Set<Int>()
            for (index, group) in groups.enumerated() {
                if let slot = slotOf[ObjectIdentifier(group)], taken.insert(slot).inserted { slots[index] = slot }
            }
            for (index, group) in groups.enumerated() where slots[index] < 0 {
                if let slot = slotOfSource[group.source], taken.insert(slot).inserted { slots[index] = slot }
            }
            var next = 0
            for index in groups.indices where slots[index] < 0 {
                while taken.contains(next) { next += 1 }
                slots[index] = next
                taken.insert(next)
            }
        } else {
            slots = Array(groups.indices)
        }
        var groupBySlot = [Int](repeating: -1, count: (slots.max() ?? -1) + 1)
        for (index, slot) in slots.enumerated() { groupBySlot[slot] = index }
        self.slots = slots
        self.groupBySlot = groupBySlot
    }

    /// The host-table position of the site at `offset` in group `group`.
    public func position(group: Int, offset: Int) -> Int { slots[group] << 32 | offset }

    /// The group and offset a host-table position stands for.
    public func locate(position: Int) -> (group: Int, offset: Int) {
        // The request path: positions come from the host table, built with this list.
        let slot = position >> 32
        precondition(slot < groupBySlot.count && groupBySlot[slot] >= 0, "site position out of range")
        return (groupBySlot[slot], position & 0xFFFF_FFFF)
    }

    /// The group and offset a host-table position stands for; nil when no site has that position. For
    /// callers that must answer rather than stop the server (the admin pages) when a position is wrong.
    public func locateIfPresent(position: Int) -> (group: Int, offset: Int)? {
        let slot = position >> 32
        let offset = position & 0xFFFF_FFFF
        guard position >= 0, slot < groupBySlot.count, groupBySlot[slot] >= 0 else { return nil }
        let group = groupBySlot[slot]
        guard offset < groups[group].sites.count else { return nil }
        return (group, offset)
    }

    /// Every site with its host-table position, group by group. A walk over the sites that later looks a
    /// site up again takes its position from here: a count of the sites seen so far is a flat ordinal,
    /// which is another number as soon as there is more than one group.
    public var positioned: Positioned { Positioned(list: self) }

    public struct Positioned: Sequence {
        let list: SiteList

        public func makeIterator() -> Iterator { Iterator(list: list) }

        public struct Iterator: IteratorProtocol {
            private let list: SiteList
            private var group = 0
            private var offset = 0

            init(list: SiteList) { self.list = list }

            public mutating func next() -> (position: Int, site: LoadedSite)? {
                while group < list.groups.count {
                    let sites = list.groups[group].sites
                    if offset < sites.count {
                        offset += 1
                        return (list.position(group: group, offset: offset - 1), sites[offset - 1])
                    }
                    group += 1
                    offset = 0
                }
                return nil
            }
        }
    }

    /// Whether any site has link rules.
    public var hasLinkRules: Bool { groups.contains { $0.linkSiteCount > 0 } }

    /// The site at a host-table position.
    public func site(atPosition position: Int) -> LoadedSite {
        let (group, offset) = locate(position: position)
        return groups[group].sites[offset]
    }

    public init(_ sites: [LoadedSite]) {
        self.init(groups: sites.isEmpty ? [] : [Group(sites)])
    }

    public init(arrayLiteral sites: LoadedSite...) { self.init(sites) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { starts[starts.count - 1] }

    public subscript(position: Int) -> LoadedSite {
        let (group, offset) = locate(position)
        return groups[group].sites[offset]
    }

    /// The group holding the site at `position`, and its place in that group: a binary search over the
    /// groups (about ten steps for a thousand files), made on every request by the server.
    public func locate(_ position: Int) -> (group: Int, offset: Int) {
        precondition(position >= 0 && position < endIndex, "site position out of range")
        if groups.count == 1 { return (0, position) }
        var low = 0
        var high = groups.count - 1
        // The last group whose start is at or before `position` (empty groups share their successor's start).
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return (low, position - starts[low])
    }

    /// The files every site hosts verbatim, in site order.
    public var hostedFiles: [String] { groups.flatMap(\.hostedFiles) }

    public func makeIterator() -> Iterator { Iterator(groups: groups) }

    /// Walks group by group, without a search per site.
    public struct Iterator: IteratorProtocol {
        private let groups: [Group]
        private var group = 0
        private var offset = 0

        init(groups: [Group]) { self.groups = groups }

        public mutating func next() -> LoadedSite? {
            while group < groups.count {
                let sites = groups[group].sites
                if offset < sites.count {
                    offset += 1
                    return sites[offset - 1]
                }
                group += 1
                offset = 0
            }
            return nil
        }
    }
}
