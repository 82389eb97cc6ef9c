import FetchRecords
import Synchronization

/// Counters one event loop updates without contention (its own Mutex), merged when `/metrics` is read.
struct LoopStats {
    struct RequestKey: Hashable {
        var site: String
        var pathClass: PathClass
        var status: Int
    }

    /// Link answers by site, visitor class and outcome (`aasa_link_answers_total`): all three bounded.
    struct LinkKey: Hashable {
        var site: String
        var visitor: String
        var outcome: String
    }

    var requests: [RequestKey: Int] = [:]
    var links: [LinkKey: Int] = [:]
    var responseBytes = 0
    var botFetches: [String: Int] = [:]
    var botLastFetch: [String: Double] = [:]
    var googleFetches: [String: Int] = [:]
    var googleLastFetch: [String: Double] = [:]
    /// Fetches whose User-Agent named Apple's CDN or Google's verifier from outside its network (two
    /// numbers, not a dictionary: these stats are merged once per batch).
    var unverifiedBotFetches = 0
    var unverifiedGoogleFetches = 0
    var connectionsAccepted = 0
    var connectionsEvicted = 0
    var timeouts: [String: Int] = [:]
    /// Fetches by known fetchers since the supervisor last took them (``StatsRegistry/takeFetches()``).
    var fetches: [FetchRecord] = []

    mutating func merge(_ other: LoopStats) {
        requests.merge(other.requests, uniquingKeysWith: +)
        links.merge(other.links, uniquingKeysWith: +)
        responseBytes += other.responseBytes
        botFetches.merge(other.botFetches, uniquingKeysWith: +)
        botLastFetch.merge(other.botLastFetch, uniquingKeysWith: max)
        googleFetches.merge(other.googleFetches, uniquingKeysWith: +)
        googleLastFetch.merge(other.googleLastFetch, uniquingKeysWith: max)
        unverifiedBotFetches += other.unverifiedBotFetches
        unverifiedGoogleFetches += other.unverifiedGoogleFetches
        connectionsAccepted += other.connectionsAccepted
        connectionsEvicted += other.connectionsEvicted
        timeouts.merge(other.timeouts, uniquingKeysWith: +)
        fetches += other.fetches
    }
}

/// What one loop counts during a batch of events, without a lock, folded into its shared counters once
/// per batch. Requests to the same site, path and status in a row (the common case) cost a comparison;
/// the batch then costs one lock and one dictionary update.
struct PendingStats {
    private var responseBytes = 0
    private var connectionsAccepted = 0
    private var lastKey: LoopStats.RequestKey?
    private var lastKeyCount = 0
    /// Other keys seen in this batch (kept allocated between batches).
    private var otherRequests: [LoopStats.RequestKey: Int] = [:]
    /// Rare counters: timeouts, evictions, fetches by Apple's CDN.
    private var rare: LoopStats?
    private var lastLinkKey: LoopStats.LinkKey?
    private var lastLinkCount = 0
    private var otherLinks: [LoopStats.LinkKey: Int] = [:]
    /// Where `lastKey` sits in the shared dictionary: only this loop changes that dictionary, and an
    /// index stays valid until a key is added, so the usual batch updates its count without hashing.
    private var sharedIndex: Dictionary<LoopStats.RequestKey, Int>.Index?

    mutating func count(_ key: LoopStats.RequestKey, bytes: Int) {
        responseBytes += bytes
        if key == lastKey {
            lastKeyCount += 1
            return
        }
        if let lastKey, lastKeyCount > 0 { otherRequests[lastKey, default: 0] += lastKeyCount }
        lastKey = key
        lastKeyCount = 1
    }

    mutating func countAccepted() { connectionsAccepted += 1 }

    /// A link answer: like requests, the same key in a row costs a comparison.
    mutating func countLink(_ key: LoopStats.LinkKey) {
        if key == lastLinkKey {
            lastLinkCount += 1
            return
        }
        if let lastLinkKey, lastLinkCount > 0 { otherLinks[lastLinkKey, default: 0] += lastLinkCount }
        lastLinkKey = key
        lastLinkCount = 1
    }

    mutating func add(_ change: (inout LoopStats) -> Void) {
        var stats = rare ?? LoopStats()
        change(&stats)
        rare = stats
    }

    /// Folds what was counted into `stats` and starts over; false when nothing was counted.
    @discardableResult
    mutating func publish(into shared: borrowing Mutex<LoopStats>) -> Bool {
        guard responseBytes > 0 || connectionsAccepted > 0 || lastKeyCount > 0 || lastLinkCount > 0 || rare != nil else { return false }
        shared.withLock { stats in
            stats.responseBytes += responseBytes
            stats.connectionsAccepted += connectionsAccepted
            if !otherRequests.isEmpty {
                stats.requests.merge(otherRequests, uniquingKeysWith: +)
                sharedIndex = nil
            }
            if let lastKey, lastKeyCount > 0 {
                if let index = sharedIndex, stats.requests.keys[index] == lastKey {
                    stats.requests.values[index] += lastKeyCount
                } else {
                    let before = stats.requests.count
                    stats.requests[lastKey, default: 0] += lastKeyCount
                    if stats.requests.count != before { sharedIndex = nil }
                    sharedIndex = stats.requests.index(forKey: lastKey)
                }
            }
            if let lastLinkKey, lastLinkCount > 0 { otherLinks[lastLinkKey, default: 0] += lastLinkCount }
            if !otherLinks.isEmpty { stats.links.merge(otherLinks, uniquingKeysWith: +) }
            if let rare {
                stats.merge(rare)
                sharedIndex = nil
            }
        }
        responseBytes = 0
        connectionsAccepted = 0
        lastKeyCount = 0
        lastLinkCount = 0
        if !otherRequests.isEmpty { otherRequests.removeAll(keepingCapacity: true) }
        if !otherLinks.isEmpty { otherLinks.removeAll(keepingCapacity: true) }
        rare = nil
        return true
    }
}

/// Every loop's counters, so the admin listener can merge them.
final class StatsRegistry: Sendable {
    /// A Mutex cannot live in an array (it is not copyable), so each sits in its own box.
    final class LoopCounters: Sendable {
        let stats = Mutex(LoopStats())
    }

    let loops: [LoopCounters]

    init(count: Int) { loops = (0..<count).map { _ in LoopCounters() } }

    /// The fetches every loop recorded since the last call, for the supervisor.
    func takeFetches() -> [FetchRecord] {
        var taken: [FetchRecord] = []
        for loop in loops {
            loop.stats.withLock { stats in
                if !stats.fetches.isEmpty {
                    taken += stats.fetches
                    stats.fetches = []
                }
            }
        }
        return taken
    }

    func merged() -> LoopStats {
        var total = LoopStats()
        for loop in loops { loop.stats.withLock { total.merge($0) } }
        return total
    }
}
