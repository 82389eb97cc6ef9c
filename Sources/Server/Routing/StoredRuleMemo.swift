import Links

/// The routing rule each stored short link's FDL parameters make, as one event loop last worked it out:
/// checking a link's destinations against the site's allowlist and preparing its rule is about 25,000
/// instructions, half of a click the answer cache does not hold (a campaign of a thousand links clicked in
/// turn). The rule is a pure function of the link's parameters (its revision), the site's compiled links
/// (new at every load) and the host, and each entry holds exactly those, the links by reference: a change
/// to the link, or a reload, never meets an old rule. Bounded: at most `capacity` links, forgotten all at
/// once when full. Used by one loop only, so it takes no lock.
final class StoredRuleMemo {
    static let capacity = 1_024

    private struct Entry {
        let links: CompiledLinks
        let revision: Int64
        let host: String
        let parsed: Result<FirebaseLongLink.Parsed, FirebaseLongLink.Refusal>
    }

    private var entries: [Int64: Entry] = [:]
    private(set) var hits = 0

    func rule(
        for stored: StoredLink,
        host: String,
        links: CompiledLinks,
        make: () -> Result<FirebaseLongLink.Parsed, FirebaseLongLink.Refusal>
    ) -> Result<FirebaseLongLink.Parsed, FirebaseLongLink.Refusal> {
        // A link read from no store has no row id to be known by.
        guard stored.id != 0 else { return make() }
        if let entry = entries[stored.id], entry.links === links, entry.revision == stored.revision, entry.host == host {
            hits += 1
            return entry.parsed
        }
        let parsed = make()
        if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
        entries[stored.id] = Entry(links: links, revision: stored.revision, host: host, parsed: parsed)
        return parsed
    }
}
