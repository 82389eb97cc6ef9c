import Testing

@testable import Server

@Suite("When memory goes back: at the start, after reloads, when one-off work ends, after quiet")
struct MemoryReturnTests {
    static let megabyte = 1 << 20

    /// Ticks of the supervisor from `from` to `to` (50 ms apart); the times a release was due.
    static func releases(
        _ memory: inout MemoryReturn,
        from: Int64,
        to: Int64,
        activity: (Int64) -> Int = { _ in 0 },
        endings: (Int64) -> Int = { _ in 0 },
        resident: Int = 0
    ) -> [Int64] {
        var due: [Int64] = []
        var now = from
        while now <= to {
            if memory.isDue(now: now, activity: activity(now), oneOffEndings: endings(now), resident: { resident }) {
                due.append(now)
                memory.released(resident: resident)
            }
            now += 50
        }
        return due
    }

    @Test("The start's pages go at the first tick, and nothing more while resident memory stays put")
    func start() {
        var memory = MemoryReturn(now: 1_000, resident: 8 * Self.megabyte, oneOffEndings: 0)
        #expect(Self.releases(&memory, from: 1_000, to: 40_000, resident: 8 * Self.megabyte) == [1_000])
    }

    @Test("One-off work that ends is followed by a release at the next tick, each time, and before a reload's five seconds")
    func oneOffWork() {
        var memory = MemoryReturn(now: 0, resident: 8 * Self.megabyte, oneOffEndings: 3)
        // Endings before the supervisor started are the start's release's.
        #expect(Self.releases(&memory, from: 0, to: 1_000, endings: { _ in 3 }) == [0])
        #expect(Self.releases(&memory, from: 1_050, to: 3_000, endings: { $0 >= 1_230 ? 4 : 3 }) == [1_250])
        memory.reloaded(now: 3_000)
        #expect(memory.releaseAt == 8_000)
        #expect(Self.releases(&memory, from: 3_050, to: 9_000, endings: { $0 >= 3_400 ? 5 : 4 }) == [3_400])
        #expect(memory.releaseAt == nil)
    }

    @Test("A reload's release waits five seconds, and a reload in that time moves it")
    func reloads() {
        var memory = MemoryReturn(now: 0, resident: 0, oneOffEndings: 0)
        _ = Self.releases(&memory, from: 0, to: 0)
        memory.reloaded(now: 1_000)
        #expect(Self.releases(&memory, from: 1_050, to: 4_000).isEmpty)
        memory.reloaded(now: 4_000)
        #expect(Self.releases(&memory, from: 4_050, to: 9_500) == [9_000])
    }

    @Test("After ten quiet seconds with over a megabyte more resident; never under steady activity")
    func quiet() {
        var memory = MemoryReturn(now: 0, resident: 10 * Self.megabyte, oneOffEndings: 0)
        _ = Self.releases(&memory, from: 0, to: 0, resident: 10 * Self.megabyte)
        // Busy until 20 s (activity changes every tick), then quiet: due once, ten seconds into the quiet.
        let busy: (Int64) -> Int = { now in now < 20_000 ? Int(now) : 20_000 }
        let due = Self.releases(&memory, from: 50, to: 40_000, activity: busy, resident: 30 * Self.megabyte)
        #expect(due.count == 1)
        #expect(due.allSatisfy { $0 >= 30_000 && $0 <= 31_100 }, "\(due)")
        // Not above the last release by a megabyte: nothing.
        var settled = MemoryReturn(now: 0, resident: 10 * Self.megabyte, oneOffEndings: 0)
        _ = Self.releases(&settled, from: 0, to: 0, resident: 10 * Self.megabyte)
        #expect(Self.releases(&settled, from: 50, to: 30_000, resident: 10 * Self.megabyte + Self.megabyte / 2).isEmpty)
    }
}
