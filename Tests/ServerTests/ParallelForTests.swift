import Glibc
import Posix
import Synchronization
import Testing

/// The loading threads: every index exactly once, and — with a value per thread — each value made on its
/// thread and used by that thread only.
@Suite("Parallel for")
struct ParallelForTests {
    /// What one thread's value records: the thread that made it and how many indices it was handed.
    final class Tally: @unchecked Sendable {
        let thread = pthread_self()
        var calls = 0
    }

    @Test("Each thread gets a value of its own, made on that thread and kept across its calls; every index is run once")
    func threadLocalValues() {
        let count = 10_000
        let visits = Mutex([Int](repeating: 0, count: count))
        let tallies = Mutex<[Tally]>([])
        let foreign = Atomic<Int>(0)
        let makeTally: @Sendable () -> Tally = {
            let tally = Tally()
            tallies.withLock { $0.append(tally) }
            return tally
        }
        Posix.parallelFor(count, local: makeTally) { tally, index in
            if pthread_equal(tally.thread, pthread_self()) == 0 { foreign.add(1, ordering: .relaxed) }
            tally.calls += 1
            visits.withLock { $0[index] += 1 }
        }
        #expect(visits.withLock { $0.allSatisfy { $0 == 1 } })
        #expect(foreign.load(ordering: .relaxed) == 0)
        let made = tallies.withLock { $0 }
        #expect(made.count >= 1 && made.count <= min(Posix.availableCPUs(), 8))
        #expect(made.reduce(0) { $0 + $1.calls } == count)
        #expect(Set(made.map { UInt($0.thread) }).count == made.count, "one value per thread")
    }

    @Test("A few indices run on the calling thread alone, with one value")
    func fewOnOneThread() {
        for count in [0, 1, 31] {
            let made = Atomic<Int>(0)
            let visits = Mutex([Int](repeating: 0, count: count))
            let caller = pthread_self()
            let elsewhere = Atomic<Int>(0)
            let countMade: @Sendable () -> Void = { made.add(1, ordering: .relaxed) }
            Posix.parallelFor(count, local: countMade) { _, index in
                if pthread_equal(caller, pthread_self()) == 0 { elsewhere.add(1, ordering: .relaxed) }
                visits.withLock { $0[index] += 1 }
            }
            #expect(made.load(ordering: .relaxed) == 1 && elsewhere.load(ordering: .relaxed) == 0)
            #expect(visits.withLock { $0.allSatisfy { $0 == 1 } })
        }
    }
}
