import AASA
import Posix
import Synchronization

/// The main thread once the loops run: waits for signals, file changes and `POST /reload` requests,
/// reloads (so no event loop ever stalls on it), and runs the drain on SIGTERM/SIGINT.
final class Supervisor {
    /// Reads the config and what it references afresh (``ConfigReader``), for each reload.
    private let readInputs: @Sendable () -> Result<GenerationInputs, FileError>
    private let state: ServerState
    private let loops: [EventLoop]
    private let registry: StatsRegistry
    private var fetchesCollected = 0
    private let signals: SignalFD
    private var mainSockets: [ListenerSocket]
    private var watch: FileWatch
    private var memory = MemoryReturn(
        now: Posix.monotonicMilliseconds(),
        resident: Posix.residentBytes(),
        oneOffEndings: OneOffWork.endings
    )
    /// systemd's notify socket (`Type=notify`), when started by systemd.
    private let systemd = SystemdNotifier()

    init(
        readInputs: @escaping @Sendable () -> Result<GenerationInputs, FileError>,
        state: ServerState,
        loops: [EventLoop],
        registry: StatsRegistry,
        signals: consuming SignalFD,
        mainSockets: [ListenerSocket]
    ) {
        self.readInputs = readInputs
        self.state = state
        self.loops = loops
        self.registry = registry
        self.signals = signals
        self.mainSockets = mainSockets
        let current = state.current
        watch = FileWatch(files: current.files, settings: current.settings)
    }

    /// Tells systemd the server is ready (it listens and watches; the loops run).
    func announceReady() {
        systemd?.send(["READY=1", status(), "MAINPID=\(Posix.processID())"])
    }

    private func status() -> String {
        let snapshot = state.snapshot
        return
            "STATUS=serving \(snapshot.layout.count) sites, \(snapshot.layout.hostCount) hosts (config generation \(snapshot.generation))"
    }

    /// Returns when the drain is over.
    func run() {
        var pendingReloadAt: Int64?
        while true {
            let ready = Posix.waitReadable([signals.fd, state.supervisorWake.fd] + watch.descriptors, timeoutMilliseconds: 50)
            let now = Posix.monotonicMilliseconds()
            if let delay = watch.changed(readable: ready, now: now) { pendingReloadAt = now + delay }
            if ready.contains(state.supervisorWake.fd) {
                state.supervisorWake.drain()
                let tickets = state.reloads.takeRequests()
                if !tickets.isEmpty {
                    let outcome = reload(trigger: "POST /reload")
                    memory.reloaded(now: Posix.monotonicMilliseconds())
                    state.reloads.answer(tickets, with: outcome)
                    for loop in Set(tickets.map(\.loop)) { loops[loop].epoll.wake() }
                }
            }
            if let due = pendingReloadAt, now >= due {
                pendingReloadAt = nil
                reload(trigger: "file change")
                memory.reloaded(now: Posix.monotonicMilliseconds())
            }
            if memory.isDue(
                now: now,
                activity: state.activity.load(ordering: .relaxed),
                oneOffEndings: OneOffWork.endings,
                resident: Posix.residentBytes
            ) {
                Posix.releaseFreeMemory()
                Posix.releaseStartupPages()
                memory.released(resident: Posix.residentBytes())
            }
            collectFetches()
            state.fetchLog.tick(now: now)
            switch signals.next() {
            case .hangup?:
                reload(trigger: "SIGHUP")
                memory.reloaded(now: Posix.monotonicMilliseconds())
            case .terminate?, .interrupt?:
                drain()
                return
            case nil:
                break
            }
        }
    }

    /// Takes the fetches the loops recorded into the fetch log (and the state directory). The loops
    /// publish their counts once per batch, so a fetch is here within one batch and one tick. A loop
    /// counts a fetch as waiting before its batch is published: only what was taken counts as collected,
    /// so a fetch announced but not yet published is taken on a later tick (it used to be left until the
    /// next fetch came, and a server's last fetch could stay out of its records).
    private func collectFetches() {
        let waiting = state.fetchesWaiting.load(ordering: .relaxed)
        guard waiting != fetchesCollected else { return }
        let taken = registry.takeFetches()
        fetchesCollected += taken.count
        state.fetchLog.collect(taken, snapshot: state.snapshot)
    }

    /// Reads the config again and, if it has no errors, publishes it in one atomic swap; otherwise the
    /// running config keeps serving. Logs one line either way.
    @discardableResult
    func reload(trigger: String) -> ReloadOutcome {
        systemd?.send(["RELOADING=1", SystemdNotifier.monotonicField(), "STATUS=reloading (\(trigger))"])
        let outcome = performReload(trigger: trigger)
        switch outcome {
        case .reloaded: systemd?.send(["READY=1", status()])
        case .rejected(let refused):
            systemd?.send([
                "READY=1",
                "STATUS=reload rejected, still serving generation \(refused.generation): \(refused.errors.first?.description ?? "")",
            ])
        }
        return outcome
    }

    /// SIGHUP, a file change or `POST /reload` → read the inputs → ``Generation/next(from:inputs:)`` → swap.
    private func performReload(trigger: String) -> ReloadOutcome {
        let started = Posix.monotonicMilliseconds()
        state.lastReloadAttemptMilliseconds.store(Int(Posix.unixTime() * 1000), ordering: .relaxed)
        let previous = state.current
        let outcome: ReloadOutcome
        let inputs = readInputs()
        switch inputs.mapError(RejectedReload.unreadable(previous)).flatMap({ Generation.next(from: previous, inputs: $0) }) {
        case .failure(let rejected):
            outcome = .rejected(rejected)
        case .success(let next):
            let compiledSites = (try? inputs.get())?.options.compiledSites
            if case .success(let read) = inputs { compiledSites?.keep(next.config, configPath: read.configPath) }
            // Fetches answered from the previous generation are recorded against it first.
            collectFetches()
            state.publish(next)
            PendingGzipForms.makeInBackground(in: next.snapshot) { compiledSites?.writeWaiting() }
            state.fetchLog.published(next.snapshot)
            Log.configure(next.settings.logFormat)
            watch.update(files: next.files, settings: next.settings)
            outcome = .reloaded(
                .init(
                    generation: next.number,
                    milliseconds: Posix.monotonicMilliseconds() - started,
                    changes: next.snapshot.changes,
                    certificatesReplaced: next.certificatesReplaced,
                    needsRestart: next.needsRestart
                )
            )
        // `previous` is freed when this returns, after the swap: freeing a large config takes
        // milliseconds nobody should wait for.
        }
        switch outcome {
        case .reloaded:
            state.reloadSuccesses.add(1, ordering: .relaxed)
            state.lastReloadFailed.store(false, ordering: .relaxed)
            Log.info(outcome.logLine(trigger: trigger))
        case .rejected(let refused):
            state.reloadFailures.add(1, ordering: .relaxed)
            state.lastReloadFailed.store(true, ordering: .relaxed)
            // The summary line, then every error on its own line (as JSON objects with their place, in JSON format).
            Log.error(outcome.logLine(trigger: trigger))
            for finding in refused.errors { Log.finding(finding) }
        }
        watch.rememberCurrentFiles()
        return outcome
    }

    /// Stops accepting, lets in-flight requests finish (up to the drain timeout), then returns.
    private func drain() {
        let drainTimeout = state.current.settings.drainTimeout
        Log.info("draining: stopped accepting, finishing in-flight requests (up to \(drainTimeout) s)")
        systemd?.send(["STOPPING=1", "STATUS=draining"])
        state.draining.store(true, ordering: .releasing)
        for loop in loops { loop.epoll.wake() }
        let deadline = Posix.monotonicMilliseconds() + Int64(drainTimeout * 1000)
        while Posix.monotonicMilliseconds() < deadline {
            // Close the listening sockets as soon as every loop has let go of them, so new connections are
            // refused (not left in the backlog) while the drain runs.
            if !mainSockets.isEmpty && loops.allSatisfy({ $0.releasedListeners.load(ordering: .acquiring) }) {
                for socket in mainSockets { Posix.close(socket.fd) }
                mainSockets = []
            }
            if loops.allSatisfy({ $0.drained.load(ordering: .acquiring) }) { return }
            // A second SIGTERM or SIGINT ends the drain at once.
            if Posix.waitReadable([signals.fd], timeoutMilliseconds: 10).contains(signals.fd),
                let signal = signals.next(), signal != .hangup
            {
                break
            }
        }
        Log.info("drain timeout reached; closing the remaining connections")
    }

    /// Closes what the drain did not (a drain cut short).
    func closeListeners() {
        for socket in mainSockets { Posix.close(socket.fd) }
        mainSockets = []
    }
}
