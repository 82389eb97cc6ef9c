import LinkStore
import Support

/// Clicks on stored short links, on their way from the loops' counters to the link store: taken from the
/// loops every few seconds, added to what is waiting, written in one transaction per day. While the store
/// cannot be written they wait here — up to `keyLimit` distinct (link, class, outcome, HEAD) keys, which
/// holds every click of a hundred thousand links; clicks of keys beyond it are dropped, counted and logged,
/// never silently lost.
struct ClickWriter {
    static let keyLimit = 100_000

    private(set) var waiting: [LoopStats.ClickKey: Int] = [:]
    private(set) var dropped = 0
    /// Clicks of links deleted before their clicks were written.
    private(set) var orphaned = 0

    /// Adds what the loops counted since the last call.
    mutating func add(_ taken: [LoopStats.ClickKey: Int]) {
        for (key, count) in taken {
            if waiting[key] == nil, waiting.count >= Self.keyLimit {
                dropped += count
                continue
            }
            waiting[key, default: 0] += count
        }
    }

    /// Writes everything waiting as clicks of `unixSeconds`'s day (UTC); what cannot be written keeps waiting.
    mutating func write(to database: LinkDatabase, unixSeconds: Int) throws(LinkStoreError) {
        guard !waiting.isEmpty else { return }
        let day = String(CivilTime(unixSeconds: unixSeconds).isoSecond.prefix(10))
        let clicks = waiting.map { key, count in
            LinkDatabase.ClickCount(
                link: key.link,
                visitor: key.visitor,
                outcome: key.outcome,
                head: key.head,
                count: count
            )
        }
        orphaned += try database.addClicks(clicks, day: day)
        waiting = [:]
    }
}
