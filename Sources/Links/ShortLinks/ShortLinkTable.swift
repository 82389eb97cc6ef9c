import AASA

/// The stored short links a server answers from, in memory: the event loops look a click up here and
/// never wait on the database. Immutable — a change makes a new table, which the loops pick up with
/// their next batch — and split into shards by the link's domain and path, so a change copies only the
/// shards it touches (1/256 of the links each), not the whole table.
public final class ShortLinkTable: Sendable {
    public static let shardCount = 256

    private final class Shard: Sendable {
        let links: [String: StoredLink]
        init(_ links: [String: StoredLink]) { self.links = links }
    }

    private let shards: [Shard]
    /// The store's revision this table reflects: the watcher asks for changes after it.
    public let revision: Int64
    public let count: Int
    /// Link domains whose kill switch is off: their stored links answer 410 Gone.
    public let disabledDomains: Set<String>
    /// The store's key for claim codes (``ClaimCode``); nil until it is read.
    public let claimKey: [UInt8]?

    public static let empty = ShortLinkTable(
        shards: [Shard](repeating: Shard([:]), count: shardCount),
        revision: 0,
        count: 0,
        disabledDomains: [],
        claimKey: nil
    )

    private init(shards: [Shard], revision: Int64, count: Int, disabledDomains: Set<String>, claimKey: [UInt8]?) {
        self.shards = shards
        self.revision = revision
        self.count = count
        self.disabledDomains = disabledDomains
        self.claimKey = claimKey
    }

    private func with(
        shards: [Shard]? = nil,
        revision: Int64? = nil,
        count: Int? = nil,
        disabledDomains: Set<String>? = nil,
        claimKey: [UInt8]? = nil
    ) -> ShortLinkTable {
        ShortLinkTable(
            shards: shards ?? self.shards,
            revision: revision ?? self.revision,
            count: count ?? self.count,
            disabledDomains: disabledDomains ?? self.disabledDomains,
            claimKey: claimKey ?? self.claimKey
        )
    }

    /// This table with `domains` switched off (itself when that is already so).
    public func disabling(_ domains: Set<String>) -> ShortLinkTable {
        domains == disabledDomains ? self : with(disabledDomains: domains)
    }

    /// This table signing claim codes with `key` (itself when it already does).
    public func signing(with key: [UInt8]) -> ShortLinkTable {
        key == claimKey ? self : with(claimKey: key)
    }

    static func key(domain: String, path: String) -> String { domain + path }

    private static func shard(of key: String) -> Int {
        Int(truncatingIfNeeded: FNV1a.hash(key.utf8) % UInt64(shardCount))
    }

    /// The active or disabled link at `path` on `domain` (a host name in lower case, as requests' hosts are
    /// normalized).
    public func link(domain: String, path: String) -> StoredLink? {
        let key = Self.key(domain: domain, path: path)
        return shards[Self.shard(of: key)].links[key]
    }

    /// This table with `changes` applied in order (a deleted link leaves it), at `revision`.
    public func applying(_ changes: [StoredLink], revision: Int64) -> ShortLinkTable {
        guard !changes.isEmpty else {
            return revision == self.revision ? self : with(revision: revision)
        }
        // Each touched shard is copied once and then changed in place (a copy per link would make loading a
        // million links quadratic: 358 s where it takes seconds).
        var touched = [[String: StoredLink]?](repeating: nil, count: Self.shardCount)
        var count = self.count
        for link in changes {
            let key = Self.key(domain: link.domain, path: link.path)
            let index = Self.shard(of: key)
            if touched[index] == nil { touched[index] = shards[index].links }
            if link.state == .deleted {
                if touched[index]!.removeValue(forKey: key) != nil { count -= 1 }
            } else if touched[index]!.updateValue(link, forKey: key) == nil {
                count += 1
            }
        }
        var shards = self.shards
        for (index, links) in touched.enumerated() { if let links { shards[index] = Shard(links) } }
        return with(shards: shards, revision: max(revision, self.revision), count: count)
    }
}
