import Synchronization
import Testing

@testable import Server

/// The per-loop counters: runs of one key cost a comparison, every count reaches the shared totals, batch
/// after batch, whatever order the keys came in.
@Suite("Pending stats: runs of keys folded into the shared counters")
struct PendingStatsTests {
    @Test("Runs, alternations and new keys across three batches add up to exactly what was counted, links apart")
    func totals() {
        let shared = Mutex(LoopStats())
        var pending = PendingStats()
        var expected: [LoopStats.RequestKey: Int] = [:]
        var expectedLinks: [LoopStats.LinkKey: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        let sites = ["a.example", "b.example", "c.example"]
        for batch in 0..<3 {
            for _ in 0..<500 {
                // Mostly runs of one key, now and then another: the shapes the run counter takes shortcuts on.
                let site = Int.random(in: 0..<10, using: &generator) < 8 ? sites[batch] : sites.randomElement(using: &generator)!
                let key = LoopStats.RequestKey(site: site, pathClass: .aasa, status: Bool.random(using: &generator) ? 200 : 304)
                if Bool.random(using: &generator) {
                    pending.count(site: key.site, pathClass: key.pathClass, status: key.status, bytes: 10)
                } else {
                    pending.count(key, bytes: 10)
                }
                expected[key, default: 0] += 1
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    let link = LoopStats.LinkKey(site: site, visitor: "desktop", outcome: Bool.random(using: &generator) ? "web" : "store")
                    // The loop's way (the key's parts, compared in place) and the key's, mixed: the same runs.
                    if Bool.random(using: &generator) {
                        pending.countLink(site: link.site, visitor: link.visitor, outcome: link.outcome)
                    } else {
                        pending.countLink(link)
                    }
                    expectedLinks[link, default: 0] += 1
                }
            }
            let published = pending.publish(into: shared)
            let again = pending.publish(into: shared)
            #expect(published && !again, "a batch is published once; nothing new, nothing published")
        }
        let stats = shared.withLock { $0 }
        #expect(stats.requests == expected)
        #expect(stats.links == expectedLinks)
        #expect(stats.responseBytes == 1_500 * 10)
    }

    @Test("Batches of one run each — keep-alive clients, one per batch — add up, as keys come, go and new ones grow the totals")
    func oneRunPerBatch() {
        let shared = Mutex(LoopStats())
        var pending = PendingStats()
        var expectedLinks: [LoopStats.LinkKey: Int] = [:]
        var expectedRequests: [LoopStats.RequestKey: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        for batch in 0..<2_000 {
            // A new key now and then makes the totals grow (and move), which a remembered place must survive.
            let site = "s\(Int.random(in: 0..<(batch < 1_000 ? 3 : 200), using: &generator)).example"
            let link = LoopStats.LinkKey(site: site, visitor: "desktop", outcome: Bool.random(using: &generator) ? "web" : "store")
            let request = LoopStats.RequestKey(site: site, pathClass: .aasa, status: 200)
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                pending.countLink(site: link.site, visitor: link.visitor, outcome: link.outcome)
                expectedLinks[link, default: 0] += 1
                pending.count(request, bytes: 1)
                expectedRequests[request, default: 0] += 1
            }
            if batch % 97 == 0 { pending.add { $0.timeouts["read", default: 0] += 1 } }
            pending.publish(into: shared)
        }
        #expect(shared.withLock { $0.links } == expectedLinks)
        #expect(shared.withLock { $0.requests } == expectedRequests)
    }

    @Test("Clicks counted in any order across batches reach the writer exactly once, however often it takes them")
    func clicksTaken() {
        let registry = StatsRegistry(count: 2)
        var pendings = [PendingStats(), PendingStats()]
        var expected: [LoopStats.ClickKey: Int] = [:]
        var taken: [LoopStats.ClickKey: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        for batch in 0..<300 {
            for loop in 0..<2 {
                for _ in 0..<Int.random(in: 0...5, using: &generator) {
                    let key = LoopStats.ClickKey(
                        link: Int64.random(in: 1...4, using: &generator),
                        visitor: ["desktop", "iphone"].randomElement(using: &generator)!,
                        outcome: "web",
                        head: Bool.random(using: &generator)
                    )
                    pendings[loop].countClick(key)
                    expected[key, default: 0] += 1
                }
                pendings[loop].publish(into: registry.loops[loop].stats)
            }
            if batch % 7 == 0 { taken.merge(registry.takeClicks(), uniquingKeysWith: +) }
        }
        taken.merge(registry.takeClicks(), uniquingKeysWith: +)
        #expect(taken == expected)
        #expect(registry.takeClicks().isEmpty)
    }

    @Test("The click writer holds what the store could not take, bounded by kinds of click; beyond the bound, dropped and counted")
    func clickWriterBound() {
        var writer = ClickWriter()
        var batch: [LoopStats.ClickKey: Int] = [:]
        for index in 0..<ClickWriter.keyLimit {
            batch[LoopStats.ClickKey(link: Int64(index), visitor: "desktop", outcome: "web", head: false)] = 1
        }
        writer.add(batch)
        let known = LoopStats.ClickKey(link: 0, visitor: "desktop", outcome: "web", head: false)
        let new = LoopStats.ClickKey(link: -1, visitor: "desktop", outcome: "web", head: false)
        writer.add([known: 2, new: 5])
        #expect(writer.waiting.count == ClickWriter.keyLimit && writer.waiting[known] == 3)
        #expect(writer.dropped == 5, "a new kind over the bound is dropped and counted; a known one still adds up")
    }
}
