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

    /// Clicks on stored short links (docs/short-links.md), written to the link store by its watcher:
    /// by link (its row id), visitor class and outcome (``ClickKinds``) and whether it was a HEAD. Counted on
    /// the loops, so three numbers instead of four strings: recording a click costs the loop a few percent
    /// of the click's answer instead of 40 % (Benchmarks/request-instructions.py --without-click-recording).
    struct ClickKey: Hashable, Sendable {
        var link: Int64
        /// ``ClickKinds/code(visitor:outcome:)``.
        var kind: UInt16
        var head: Bool

        init(link: Int64, kind: UInt16, head: Bool) {
            self.link = link
            self.kind = kind
            self.head = head
        }

        init(link: Int64, visitor: String, outcome: String, head: Bool) {
            self.init(link: link, kind: ClickKinds.code(visitor: visitor, outcome: outcome), head: head)
        }

        var visitor: String { ClickKinds.names(kind).visitor }
        var outcome: String { ClickKinds.names(kind).outcome }
    }

    var requests: [RequestKey: Int] = [:]
    var links: [LinkKey: Int] = [:]
    var clicks: [ClickKey: Int] = [:]
    /// Counts the times the link store's writer took `clicks` away: an index a loop remembered into them is
    /// good only while this is what it was.
    var clicksTaken = 0
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
        clicks.merge(other.clicks, uniquingKeysWith: +)
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

/// Counts keys that mostly come in runs (one client's requests in a row): a key equal to the last one
/// costs a comparison; a new key moves the finished run into a dictionary (kept allocated between batches).
///
/// The last key is held as a plain value, starting from a key no request makes: comparing a key with an
/// optional one copied it (a retain and a release per string), which made counting a link answer about
/// 700 instructions.
struct RunCounter<Key: Hashable> {
    /// Whether `drain` may remember where its key sits: only when nobody else removes keys from the
    /// dictionary drained into (an index into a changed dictionary traps).
    let remembersIndex: Bool
    private(set) var last: Key
    private(set) var lastCount = 0
    private(set) var others: [Key: Int] = [:]
    /// Where `last` sits in the dictionary drained into: only the owner adds keys to it, and an index stays
    /// valid until a key is added, so a batch that was one run (a keep-alive client's requests) adds its
    /// count without hashing the key. Set only for the current `last` (a new key forgets it), and
    /// forgotten whenever that dictionary may have changed shape.
    private var drainedIndex: Dictionary<Key, Int>.Index?

    /// `empty`: a key never counted, standing for "no run yet".
    init(empty: Key, remembersIndex: Bool = true) {
        last = empty
        self.remembersIndex = remembersIndex
    }

    /// ``count(_:)`` for a key the caller holds in parts: `matches` compares them with the last key in place,
    /// and `make` builds the key only when they differ (building it to compare copied its strings in).
    @inline(__always)
    mutating func count(where matches: (Key) -> Bool, orMake make: () -> Key) {
        if matches(last) {
            lastCount += 1
            return
        }
        count(make())
    }

    mutating func count(_ key: Key) {
        if key == last {
            lastCount += 1
            return
        }
        if lastCount > 0 { others[last, default: 0] += lastCount }
        last = key
        lastCount = 1
        drainedIndex = nil
    }

    /// Adds every run counted to `counts` and starts over (the last key is kept: the next run often repeats it).
    mutating func drain(into counts: inout [Key: Int]) {
        guard lastCount > 0 || !others.isEmpty else { return }
        if remembersIndex, others.isEmpty {
            if let index = drainedIndex {
                counts.values[index] += lastCount
            } else if let index = counts.index(forKey: last) {
                // A key counted before (a link clicked again after others): one lookup, remembered.
                counts.values[index] += lastCount
                drainedIndex = index
            } else {
                counts[last] = lastCount
                drainedIndex = counts.index(forKey: last)
            }
            lastCount = 0
            return
        }
        if lastCount > 0 { others[last, default: 0] += lastCount }
        // Key by key: a batch holds a few, and the generic merge costs more per key than it saves.
        for (key, count) in others { counts[key, default: 0] += count }
        others.removeAll(keepingCapacity: true)
        drainedIndex = nil
        lastCount = 0
    }

    /// Nothing counted since the last drain.
    var isEmpty: Bool { lastCount == 0 && others.isEmpty }

    /// The dictionary drained into was changed by someone else (merged, replaced).
    mutating func forgetDrainedIndex() { drainedIndex = nil }
}

/// What one loop counts during a batch of events, without a lock, folded into its shared counters once
/// per batch. Requests to the same site, path and status in a row (the common case) cost a comparison;
/// the batch then costs one lock and one dictionary update.
struct PendingStats {
    private var responseBytes = 0
    private var connectionsAccepted = 0
    // Requests keep their own run (not a RunCounter): the AASA path counts every request, and the
    // generic form measured 21 instructions more per request there (request-instructions.py).
    /// A plain value, not an optional: comparing with an optional copied the key (see ``RunCounter``).
    private var lastKey = LoopStats.RequestKey(site: "", pathClass: .other, status: 0)
    private var lastKeyCount = 0
    private var otherRequests: [LoopStats.RequestKey: Int] = [:]
    private var links = RunCounter(empty: LoopStats.LinkKey(site: "", visitor: "", outcome: ""))
    /// The link store's writer takes these away: an index into them is trusted only while
    /// `clicksTaken` says they were not taken since.
    private var clicks = RunCounter(empty: LoopStats.ClickKey(link: -1, kind: 0, head: false))
    /// `LoopStats.clicksTaken` when the index into the clicks was remembered.
    private var clicksTakenSeen = 0
    /// Rare counters: timeouts, evictions, fetches by Apple's CDN.
    private var rare: LoopStats?
    /// Where the last request key sits in the shared dictionary: only this loop changes that dictionary,
    /// and an index stays valid until a key is added, so the usual batch updates its count without hashing.
    /// Set only for the current `lastKey` (a new key forgets it).
    private var sharedIndex: Dictionary<LoopStats.RequestKey, Int>.Index?

    mutating func count(_ key: LoopStats.RequestKey, bytes: Int) {
        count(site: key.site, pathClass: key.pathClass, status: key.status, bytes: bytes)
    }

    /// The key's parts compared in place: a key made for the comparison copied its site's name in and out
    /// again, two atomic reference-count changes a request when the name is longer than a small string.
    mutating func count(site: borrowing String, pathClass: PathClass, status: Int, bytes: Int) {
        responseBytes += bytes
        if status == lastKey.status, pathClass == lastKey.pathClass, site == lastKey.site {
            lastKeyCount += 1
            return
        }
        if lastKeyCount > 0 { otherRequests[lastKey, default: 0] += lastKeyCount }
        lastKey = LoopStats.RequestKey(site: copy site, pathClass: pathClass, status: status)
        lastKeyCount = 1
        sharedIndex = nil
    }

    mutating func countAccepted() { connectionsAccepted += 1 }

    /// A link answer: like requests, the same key in a row costs a comparison.
    mutating func countLink(_ key: LoopStats.LinkKey) { links.count(key) }

    /// ``countLink(_:)`` with the key's parts compared in place (see ``count(site:pathClass:status:bytes:)``).
    mutating func countLink(site: borrowing String, visitor: borrowing String, outcome: borrowing String) {
        links.count(
            where: { $0.site == site && $0.visitor == visitor && $0.outcome == outcome },
            orMake: { LoopStats.LinkKey(site: copy site, visitor: copy visitor, outcome: copy outcome) }
        )
    }

    /// A click on a stored short link.
    mutating func countClick(_ key: LoopStats.ClickKey) { clicks.count(key) }

    mutating func add(_ change: (inout LoopStats) -> Void) {
        var stats = rare ?? LoopStats()
        change(&stats)
        rare = stats
    }

    /// Folds what was counted into `stats` and starts over; false when nothing was counted.
    @discardableResult
    mutating func publish(into shared: borrowing Mutex<LoopStats>) -> Bool {
        guard responseBytes > 0 || connectionsAccepted > 0 || lastKeyCount > 0 || links.lastCount > 0 || clicks.lastCount > 0 || rare != nil
        else {
            return false
        }
        shared.withLock { stats in
            stats.responseBytes += responseBytes
            stats.connectionsAccepted += connectionsAccepted
            if !otherRequests.isEmpty {
                stats.requests.merge(otherRequests, uniquingKeysWith: +)
                otherRequests.removeAll(keepingCapacity: true)
                sharedIndex = nil
            }
            if lastKeyCount > 0 {
                if let index = sharedIndex {
                    stats.requests.values[index] += lastKeyCount
                } else {
                    stats.requests[lastKey, default: 0] += lastKeyCount
                    sharedIndex = stats.requests.index(forKey: lastKey)
                }
            }
            links.drain(into: &stats.links)
            // Most batches of most servers have no click: their publish costs one test.
            if !clicks.isEmpty {
                if stats.clicksTaken != clicksTakenSeen {
                    clicks.forgetDrainedIndex()
                    clicksTakenSeen = stats.clicksTaken
                }
                clicks.drain(into: &stats.clicks)
            }
            if let rare {
                links.forgetDrainedIndex()
                clicks.forgetDrainedIndex()
                stats.merge(rare)
                sharedIndex = nil
            }
        }
        responseBytes = 0
        connectionsAccepted = 0
        lastKeyCount = 0
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

    /// The clicks every loop counted since the last call, summed (the link store's writer takes them).
    func takeClicks() -> [LoopStats.ClickKey: Int] {
        var taken: [LoopStats.ClickKey: Int] = [:]
        for loop in loops {
            loop.stats.withLock { stats in
                guard !stats.clicks.isEmpty else { return }
                taken.merge(stats.clicks, uniquingKeysWith: +)
                stats.clicksTaken &+= 1
                stats.clicks = [:]
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
