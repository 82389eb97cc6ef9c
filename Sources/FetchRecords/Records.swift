/// One fetch by a known fetcher, as the server answered it.
public struct FetchRecord: Equatable, Hashable, Sendable {
    /// Unix time in milliseconds.
    public var time: Int
    public var host: String
    public var fetcher: Fetcher
    public var path: String
    public var status: Int
    public var bytes: Int
    /// The version served: the document's ETag value (the same for its gzip form); empty when no
    /// document was served (a 404).
    public var version: String
    public var client: String
    /// Whether the address is the fetcher's own network: only such fetches say the fetcher has a version.
    public var origin: FetchOrigin

    public init(
        time: Int,
        host: String,
        fetcher: Fetcher,
        path: String,
        status: Int,
        bytes: Int,
        version: String,
        client: String,
        origin: FetchOrigin
    ) {
        self.time = time
        self.host = host
        self.fetcher = fetcher
        self.path = path
        self.status = status
        self.bytes = bytes
        self.version = version
        self.client = client
        self.origin = origin
    }

    public var document: DocumentKind { path.hasSuffix("assetlinks.json") ? .assetLinks : .aasa }
}

/// A version of a host's document and when it started being served.
public struct VersionRecord: Equatable, Hashable, Sendable {
    public var host: String
    public var document: DocumentKind
    public var version: String
    /// Unix time in milliseconds.
    public var since: Int

    public init(host: String, document: DocumentKind, version: String, since: Int) {
        self.host = host
        self.document = document
        self.version = version
        self.since = since
    }
}

/// What one host's record holds: its last versions and fetches, oldest first, each list bounded.
public struct HostHistory: Equatable, Sendable {
    public private(set) var versions: [VersionRecord] = []
    public private(set) var fetches: [FetchRecord] = []
    /// The wildcard site that serves the host (`*.customers.example`), when no exact host does.
    public fileprivate(set) var wildcard: String?

    public init() {}

    /// When it was last fetched (or, never fetched, since when its version is served): who goes first.
    var lastSeen: Int { fetches.last?.time ?? versions.last?.since ?? 0 }

    /// False when it repeats what is already recorded (the same version, or the same fetch seen twice
    /// when merging replicas' records).
    @discardableResult
    mutating func add(_ version: VersionRecord, limit: Int) -> Bool {
        if let last = versions.last(where: { $0.document == version.document }), last.version == version.version { return false }
        if versions.contains(version) { return false }
        let position = versions.lastIndex(where: { $0.since <= version.since }).map { $0 + 1 } ?? 0
        versions.insert(version, at: position)
        if versions.count > limit { versions.removeFirst(versions.count - limit) }
        return true
    }

    @discardableResult
    mutating func add(_ fetch: FetchRecord, limit: Int) -> Bool {
        if fetches.suffix(8).contains(fetch) || (fetches.count <= 64 && fetches.contains(fetch)) { return false }
        let position = fetches.lastIndex(where: { $0.time <= fetch.time }).map { $0 + 1 } ?? 0
        fetches.insert(fetch, at: position)
        if fetches.count > limit { fetches.removeFirst(fetches.count - limit) }
        return true
    }

    public func currentVersion(_ document: DocumentKind) -> VersionRecord? { versions.last { $0.document == document } }

    /// The last fetch that counts as `fetcher`'s (from its network, or a device).
    public func lastFetch(by fetcher: Fetcher) -> FetchRecord? { fetches.last { $0.fetcher == fetcher && $0.origin.counts } }

    /// The last fetch whose User-Agent named `fetcher` but that did not come from its network.
    public func lastClaim(by fetcher: Fetcher) -> FetchRecord? { fetches.last { $0.fetcher == fetcher && !$0.origin.counts } }
}

/// Every host's history, for the hosts a known fetcher asked for (and only those: a million hosts of
/// which ten thousand are fetched keep ten thousand histories). Two bounds, because under a wildcard
/// site every made-up subdomain a fetcher (or anyone claiming to be one) asks for is a host: one per
/// wildcard, so one busy wildcard cannot push every other site's records out, and one overall.
public struct FetchLedger: Sendable {
    /// How many versions and how many fetches each host keeps.
    public let limit: Int
    /// How many hosts at most.
    public let maxHosts: Int
    /// How many hosts served through one wildcard site at most.
    public let maxHostsPerWildcard: Int
    public private(set) var hosts: [String: HostHistory] = [:]
    /// Hosts dropped to stay within `maxHosts`, those fetched longest ago first.
    public private(set) var droppedHosts = 0
    /// Hosts dropped to stay within `maxHostsPerWildcard`.
    public private(set) var droppedUnderWildcards = 0
    /// Recorded hosts per wildcard.
    private var wildcardHosts: [String: Int] = [:]

    public init(limit: Int, maxHosts: Int = Int.max, maxHostsPerWildcard: Int = Int.max) {
        self.limit = max(1, limit)
        self.maxHosts = max(1, maxHosts)
        self.maxHostsPerWildcard = max(1, maxHostsPerWildcard)
    }

    /// Records a fetch; false when it was recorded already. `wildcard`: the wildcard site serving the
    /// host, when no exact host does.
    @discardableResult
    public mutating func add(_ fetch: FetchRecord, wildcard: String? = nil) -> Bool {
        admit(fetch.host, wildcard: wildcard)
        return hosts[fetch.host, default: HostHistory()].add(fetch, limit: limit)
    }

    /// Records a version; for a host nobody fetched yet only when `always` (the version a first fetch got).
    @discardableResult
    public mutating func add(_ version: VersionRecord, always: Bool = true, wildcard: String? = nil) -> Bool {
        guard always || hosts[version.host] != nil else { return false }
        admit(version.host, wildcard: wildcard)
        return hosts[version.host, default: HostHistory()].add(version, limit: limit)
    }

    /// Another replica's (or an earlier run's) records, folded in; repeats are dropped.
    public mutating func merge(_ other: FetchLedger) {
        for (host, history) in other.hosts {
            admit(host, wildcard: history.wildcard)
            for version in history.versions { hosts[host, default: HostHistory()].add(version, limit: limit) }
            for fetch in history.fetches { hosts[host, default: HostHistory()].add(fetch, limit: limit) }
        }
    }

    /// Which wildcard serves each host, from the config in force (records read back from the state
    /// directory, a reload that added or removed a wildcard); then each wildcard within its bound.
    public mutating func regroup(wildcardServing: (String) -> String?) {
        wildcardHosts = [:]
        for host in Array(hosts.keys) {
            let wildcard = wildcardServing(host)
            hosts[host]?.wildcard = wildcard
            if let wildcard { wildcardHosts[wildcard, default: 0] += 1 }
        }
        for (wildcard, count) in wildcardHosts where count > maxHostsPerWildcard {
            droppedUnderWildcards += drop(count - maxHostsPerWildcard, where: { $0.wildcard == wildcard })
        }
    }

    /// Makes room for a new host: under its wildcard's bound, then under the overall one.
    private mutating func admit(_ host: String, wildcard: String?) {
        guard hosts[host] == nil else { return }
        if let wildcard, let count = wildcardHosts[wildcard], count >= maxHostsPerWildcard {
            droppedUnderWildcards += drop(
                Self.batch(count - maxHostsPerWildcard + 1, of: maxHostsPerWildcard),
                where: { $0.wildcard == wildcard }
            )
        }
        if hosts.count >= maxHosts { droppedHosts += drop(Self.batch(hosts.count - maxHosts + 1, of: maxHosts), where: { _ in true }) }
        var history = HostHistory()
        history.wildcard = wildcard
        hosts[host] = history
        if let wildcard { wildcardHosts[wildcard, default: 0] += 1 }
    }

    /// A hundredth of the bound at once, so a stream of new names costs a sort per many names, not per name.
    private static func batch(_ excess: Int, of bound: Int) -> Int { max(excess, bound / 100) }

    /// Drops the `count` hosts among those `matching` that were seen longest ago; returns how many went.
    private mutating func drop(_ count: Int, where matching: (HostHistory) -> Bool) -> Int {
        let oldest = hosts.filter { matching($0.value) }.map { ($0.key, $0.value.lastSeen) }.sorted { $0.1 < $1.1 }.prefix(count)
        for (host, _) in oldest {
            if let wildcard = hosts.removeValue(forKey: host)?.wildcard {
                wildcardHosts[wildcard, default: 1] -= 1
                if wildcardHosts[wildcard] == 0 { wildcardHosts[wildcard] = nil }
            }
        }
        return oldest.count
    }

    public var sortedHosts: [String] { hosts.keys.sorted() }
}
