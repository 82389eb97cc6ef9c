import AASA
import Posix
import Synchronization

/// What the event loops and the supervisor share: the generation in force, counters, the drain flag.
final class ServerState: Sendable {
    private let generation: Mutex<ServedGeneration>
    let connections: ConnectionCap
    /// Every loop's handle, by loop index; set once, before the loops start.
    private let handles = Mutex<[LoopHandle]>([])
    let draining = Atomic<Bool>(false)
    /// Counts batches of events in which a loop did something (the supervisor tells quiet from busy).
    let activity = Atomic<Int>(0)
    let reloadSuccesses = Atomic<Int>(0)
    let reloadFailures = Atomic<Int>(0)
    let lastReloadFailed = Atomic<Bool>(false)
    /// Unix time (milliseconds) of the last reload attempt, 0 before the first.
    let lastReloadAttemptMilliseconds = Atomic<Int>(0)
    let startedAt: Double
    let reloads = ReloadMailbox()
    /// Wakes the supervisor when a loop posts a reload request.
    let supervisorWake: EventFDBox

    init(serving generation: ServedGeneration, startedAt: Double) throws(SystemError) {
        self.generation = Mutex(generation)
        connections = ConnectionCap(limit: generation.settings.maxConnections)
        self.startedAt = startedAt
        supervisorWake = try EventFDBox()
    }

    var current: ServedGeneration { generation.withLock { $0 } }

    /// What requests are answered from: the current generation's responses.
    var snapshot: Snapshot { current.snapshot }

    func publish(_ next: ServedGeneration) { generation.withLock { $0 = next } }

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
