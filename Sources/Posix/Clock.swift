internal import Glibc

extension Posix {
    /// Monotonic microseconds, for deadlines and durations.
    public static func monotonicMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    /// Monotonic milliseconds.
    public static func monotonicMilliseconds() -> Int64 { monotonicMicroseconds() / 1000 }

    /// Wall-clock Unix time with sub-second precision, for logs and `Date`.
    public static func unixTime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    public static func sleep(milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
