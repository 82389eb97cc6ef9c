import AASA
import ACME
import Posix
import Synchronization

/// What the event loops and the supervisor share: the generation in force, counters, the drain flag.
final class ServerState: Sendable {
    /// The generation and, beside it, its snapshot: the loops take the snapshot when its generation moves
    /// (``snapshotGeneration``), and reading it directly spares them a retain and release of the generation.
    private let serving: Mutex<(generation: ServedGeneration, snapshot: Snapshot)>
    let connections: ConnectionCap
    /// Every loop's handle, by loop index; set once, before the loops start.
    private let handles = Mutex<[LoopHandle]>([])
    let draining = Atomic<Bool>(false)
    /// Counts batches of events in which a loop did something (the supervisor tells quiet from busy).
    let activity = Atomic<Int>(0)
    /// Counts fetches the loops recorded; the supervisor collects them when it moved.
    let fetchesWaiting = Atomic<Int>(0)
    let fetchLog: FetchLog
    let reloadSuccesses = Atomic<Int>(0)
    let reloadFailures = Atomic<Int>(0)
    let lastReloadFailed = Atomic<Bool>(false)
    /// Unix time (milliseconds) of the last reload attempt, 0 before the first.
    let lastReloadAttemptMilliseconds = Atomic<Int>(0)
    let startedAt: Double
    let reloads = ReloadMailbox()
    /// Which failed handshakes were logged lately, for every loop at once: "once a minute per name and
    /// reason" holds however many loops the failing connections land on. Failures are rare next to
    /// requests, so one lock each costs nothing that matters.
    let handshakeFailures = Mutex(HandshakeFailureLog())
    /// Wakes the supervisor when a loop posts a reload request.
    let supervisorWake: EventFDBox
    /// Certificates obtained from an ACME CA (nil without `server.acme`).
    let acme: CertificateManager?
    /// The stored short links (nil without `server.stateDirectory` or without a link domain).
    let storedLinks: StoredLinkWatcher?
    /// Carries out the link API's calls (with the stored links, or nil).
    let linkAPI: LinkAPIWorker?

    init(
        serving generation: ServedGeneration,
        startedAt: Double,
        recording: FetchRecording,
        acme: CertificateManager? = nil,
        storedLinks: StoredLinkWatcher? = nil
    ) throws(SystemError) {
        self.acme = acme
        self.storedLinks = storedLinks
        linkAPI = try storedLinks.map { watcher throws(SystemError) in try LinkAPIWorker(location: watcher.location) }
        fetchLog = FetchLog(
            settings: generation.settings,
            snapshot: generation.snapshot,
            configPath: recording.configPath,
            onFetch: recording.onFetch
        )
        serving = Mutex((generation, generation.snapshot))
        snapshotGeneration = Atomic(generation.snapshot.generation)
        connections = ConnectionCap(limit: generation.settings.maxConnections)
        self.startedAt = startedAt
        supervisorWake = try EventFDBox()
    }

    var current: ServedGeneration { serving.withLock { $0.generation } }

    /// What requests are answered from: the current generation's responses.
    var snapshot: Snapshot { serving.withLock { $0.snapshot } }

    /// ``snapshot``'s generation, stored after the snapshot: a loop holding a snapshot of this generation
    /// already has the current one, and learns it with a plain load instead of the lock.
    let snapshotGeneration: Atomic<Int>

    /// Swaps in `next`: one atomic step, so a request never mixes two generations.
    func publish(_ next: ServedGeneration) {
        serving.withLock { $0 = (next, next.snapshot) }
        snapshotGeneration.store(next.snapshot.generation, ordering: .releasing)
        tellACME(next)
    }

    /// Gives the certificate manager the hosts it obtains certificates for, and which names are served.
    func tellACME(_ generation: ServedGeneration) {
        guard let acme else { return }
        let snapshot = generation.snapshot
        acme.update(configHosts: generation.acmeHosts) { name in snapshot.hosts.lookup(normalized: name) != nil }
    }

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
