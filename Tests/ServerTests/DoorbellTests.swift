import Foundation
import Posix
import Synchronization
import Testing

/// The wake-up several threads wait on: every waiter wakes at a ring, and a ring that comes between a
/// waiter's look at the shared state and its wait is not lost.
@Suite("Doorbell")
struct DoorbellTests {
    @Test("A ring after the generation was taken ends the wait at once; without a ring the wait lasts its timeout")
    func ringBeforeWait() {
        let bell = Doorbell()
        let seen = bell.generation
        bell.ring()
        let started = Date()
        #expect(bell.wait(after: seen, timeoutMilliseconds: 10_000))
        #expect(Date().timeIntervalSince(started) < 1)
        let quiet = bell.generation
        let waited = Date()
        #expect(!bell.wait(after: quiet, timeoutMilliseconds: 300))
        #expect(Date().timeIntervalSince(waited) >= 0.29)
    }

    @Test("One ring wakes every waiting thread, and none consumes it for the others")
    func oneRingWakesAll() throws {
        let bell = Doorbell()
        let waiting = Atomic<Int>(0)
        let woken = Atomic<Int>(0)
        let seen = bell.generation
        var threads: [Posix.Thread] = []
        for _ in 0..<4 {
            threads.append(
                try Posix.Thread {
                    waiting.add(1, ordering: .sequentiallyConsistent)
                    if bell.wait(after: seen, timeoutMilliseconds: 20_000) { woken.add(1, ordering: .sequentiallyConsistent) }
                }
            )
        }
        let deadline = Date().addingTimeInterval(5)
        while waiting.load(ordering: .sequentiallyConsistent) < 4 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        // Give the four time to be inside their wait, where an eventfd's reader would take the wake-up from the rest.
        Thread.sleep(forTimeInterval: 0.1)
        let rung = Date()
        bell.ring()
        for thread in threads { thread.join() }
        #expect(woken.load(ordering: .sequentiallyConsistent) == 4)
        #expect(Date().timeIntervalSince(rung) < 5)
    }
}
