import Posix
import Synchronization

/// What the event loops and the supervisor share: the snapshot in force, counters, the drain flag.
final class ServerState: Sendable {
    private let snapshot: Mutex<Snapshot>
    let connections: ConnectionCap
    /// Every loop's handle, by loop index; set once, before the loops start.
    private let handles = Mutex<[LoopHandle]>([])
    let draining = Atomic<Bool>(false)
    /// Counts batches of events in which a loop did something (the supervisor tells quiet from busy).
    let activity = Atomic<Int>(0)
    let reloadSuccesses = Atomic<Int>(0)
    let reloadFailures = Atomic<Int>(0)
    /// Microseconds the last successful load took.
    let lastLoadMicroseconds = Atomic<Int>(0)
    let lastReloadFailed = Atomic<Bool>(false)
    /// Unix time (milliseconds) of the last reload attempt, 0 before the first.
    let lastReloadAttemptMilliseconds = Atomic<Int>(0)
    let startedAt: Double
    let reloads = ReloadMailbox()
    /// Wakes the supervisor when a loop posts a reload request.
    let supervisorWake: EventFDBox

    init(snapshot: Snapshot, startedAt: Double, maxConnections: Int) throws(SystemError) {
        self.snapshot = Mutex(snapshot)
        connections = ConnectionCap(limit: maxConnections)
        self.startedAt = startedAt
        supervisorWake = try EventFDBox()
    }

    var current: Snapshot { snapshot.withLock { $0 } }

    func publish(_ next: Snapshot) { snapshot.withLock { $0 = next } }

    var loopHandles: [LoopHandle] {
        get { handles.withLock { $0 } }
        set { handles.withLock { $0 = newValue } }
    }
}

/// An eventfd shared between threads (the noncopyable ``EventFD`` in a class).
final class EventFDBox: Sendable {
    let event: EventFD
    init() throws(SystemError) { event = try EventFD() }
    var fd: Int32 { event.fd }
    func signal() { event.signal() }
    func drain() { event.drain() }
}
