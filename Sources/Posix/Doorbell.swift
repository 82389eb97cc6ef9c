internal import Glibc

/// Wakes every thread waiting on it, and none misses a ring: a waiter takes the `generation` before it
/// looks at the shared state, and waiting after that generation returns at once when a ring came in
/// between. An eventfd several threads wait on cannot promise this: the thread that reads the counter
/// swallows the wake-up the others were woken for, and they sleep out their timeout.
public final class Doorbell: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Guarded by `mutex`.
    private var rings: UInt64 = 0

    public init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Deadlines on the monotonic clock: a wall-clock step must not stretch or cut a wait.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public var generation: UInt64 {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return rings
    }

    /// Callable from any thread.
    public func ring() {
        pthread_mutex_lock(mutex)
        rings &+= 1
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Returns once the bell rang after `seen` (true), or after `timeoutMilliseconds` (false).
    @discardableResult
    public func wait(after seen: UInt64, timeoutMilliseconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + (max(0, timeoutMilliseconds) % 1000) * 1_000_000
        deadline.tv_sec += max(0, timeoutMilliseconds) / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while rings == seen {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        return rings != seen
    }
}
