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
                pending.count(key, bytes: 10)
                expected[key, default: 0] += 1
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    let link = LoopStats.LinkKey(site: site, visitor: "desktop", outcome: Bool.random(using: &generator) ? "web" : "store")
                    pending.countLink(link)
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
}
