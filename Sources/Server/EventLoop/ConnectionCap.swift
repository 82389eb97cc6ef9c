import Posix
import Synchronization

/// `maxConnections` across every event loop: a place is reserved before a connection is accepted, so
/// the number of open connections (the `aasa_open_connections` gauge) never exceeds the cap.
final class ConnectionCap: Sendable {
    let limit: Int
    private let open = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    var count: Int { open.load(ordering: .relaxed) }

    /// Takes a place if one is free.
    func reserve() -> Bool {
        var current = open.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = open.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func release() { open.subtract(1, ordering: .relaxed) }
}

/// What other threads may see and ask of one event loop: how old its best eviction candidate is, and
/// requests to evict one (the loop that owns a connection is the only one that may close it).
final class LoopHandle: @unchecked Sendable {
    /// `group << 62 | since` of the connection this loop would evict first; `.max` when it has none.
    /// Refreshed on every timer tick and after every eviction (so at most a tick old).
    let oldestCandidate = Atomic<UInt64>(.max)
    let evictionRequests = Atomic<Int>(0)
    /// Set while the loop has taken its listeners out of epoll because the cap is reached and another
    /// loop is making room.
    let acceptPaused = Atomic<Bool>(false)
    /// Thread-safe: wakes the loop's `epoll_wait`.
    let epoll: Epoll

    init(epoll: Epoll) { self.epoll = epoll }

    static func encode(_ rank: (group: Int, since: Int64)) -> UInt64 {
        UInt64(rank.group) << 62 | UInt64(max(0, rank.since)) & ((1 << 62) - 1)
    }
}
