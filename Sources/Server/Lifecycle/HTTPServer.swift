public import AASA
public import ACME
import FetchRecords
public import Posix
import Synchronization

/// Runs `serve`: binds every listener, starts one event loop per thread, and hands the main thread to
/// the ``Supervisor`` (reloads on SIGHUP, file changes and `POST /reload`; drain on SIGTERM, SIGINT).
public enum HTTPServer {
    /// The command line's overrides of the config's server settings.
    public struct Options: Sendable {
        /// Replaces every listener of the config, TLS ones included (`--listen`, `--listen-tls`).
        public var listen: [ServerSettings.Listener]?
        /// `.some(nil)` turns the admin listener off (`--admin off`).
        public var admin: ServerSettings.Listener??

        public init(listen: [ServerSettings.Listener]? = nil, admin: ServerSettings.Listener?? = nil) {
            self.listen = listen
            self.admin = admin
        }

        /// The settings the server runs with: the config's, with these overrides applied.
        public func apply(to settings: ServerSettings) -> ServerSettings {
            var effective = settings
            if let listen { effective.listeners = listen }
            if let admin { effective.admin = admin }
            return effective
        }
    }

    /// Runs until drained; returns the process exit status. `initial` is the first generation, already
    /// reported; `readInputs` reads the config afresh for each reload. `bindFailureHint` may replace the
    /// advice for a listener that cannot be opened; `onListening` learns the listeners as bound (ports
    /// chosen for port 0) before serving; `onCompressed` runs once the first snapshot's gzip forms are
    /// made, after serving started (``PendingGzipForms``), on that work's thread.
    public static func run(
        initial: consuming ServedGeneration,
        recording: FetchRecording,
        acme: CertificateManager? = nil,
        readInputs: @escaping @Sendable () -> Result<GenerationInputs, FileError>,
        bindFailureHint: @escaping (SystemError) -> String? = { _ in nil },
        onListening: ([ServerSettings.Listener]) -> Void = { _ in },
        onCompressed: @escaping @Sendable () -> Void = {}
    ) -> Int32 {
        Log.configure(initial.settings.logFormat)
        // Before any thread exists: these signals then arrive only through the signalfd.
        let signals: SignalFD
        do {
            signals = try SignalFD([.hangup, .terminate, .interrupt])
        } catch {
            Log.error("cannot set up signal handling: \(error)")
            return 1
        }
        let settings = initial.settings
        let fileLimit = Posix.raiseOpenFileLimit()
        if fileLimit < settings.maxConnections + 64 {
            Log.error(
                "the open-file limit is \(fileLimit), below maxConnections (\(settings.maxConnections)) plus headroom; "
                    + "raise it (systemd LimitNOFILE=, docker --ulimit nofile=) or lower maxConnections"
            )
        }
        let startedAt = Posix.unixTime()
        let state: ServerState
        do {
            // Consumed: from here the state holds the first generation alone, so the first reload frees it.
            state = try ServerState(
                serving: initial,
                startedAt: startedAt,
                recording: recording,
                acme: acme,
                storedLinks: StoredLinkWatcher.forConfig(initial.config, settings: initial.settings, configPath: recording.configPath)
            )
        } catch {
            Log.error("cannot start: \(error)")
            return 1
        }

        let bound: BoundListeners
        switch BoundListeners.bind(settings, hint: bindFailureHint) {
        case .success(let listeners): bound = listeners
        case .failure(let failure):
            Log.error("cannot listen: \(failure.message)")
            return 1
        }
        onListening(bound.listening)
        let budget = CPUBudget.read(affinity: Posix.availableCPUs()) { path in
            (try? Posix.readFile(path, limit: 64 * 1024)).map { String(decoding: $0, as: UTF8.self) }
        }
        let threadCount = settings.threads ?? budget.loops
        let loopsReason = settings.threads != nil ? "server.threads" : budget.reason
        var perLoop = [[ListenerSocket]](repeating: bound.main, count: threadCount)
        if let admin = bound.admin { perLoop[0].append(admin) }
        let registry = StatsRegistry(count: threadCount)
        let loopSettings = LoopSettings(
            connection: ConnectionSettings(settings),
            maxConnections: settings.maxConnections,
            accessLog: settings.accessLog,
            trustForwardedHeaders: settings.trustForwardedHeaders,
            fetcherNetworks: FetcherNetworks(apple: settings.appleNetworks, google: settings.googleNetworks)
        )
        var loops: [EventLoop] = []
        do {
            for index in 0..<threadCount {
                loops.append(
                    try EventLoop(index: index, listeners: perLoop[index], state: state, settings: loopSettings, registry: registry)
                )
            }
        } catch {
            bound.closeAll()
            Log.error("cannot start event loops: \(error)")
            return 1
        }
        state.loopHandles = loops.map(\.handle)
        let runners = LoopHandoff(loops)
        var threads: [Posix.Thread] = []
        for index in 0..<threadCount {
            do {
                threads.append(try Posix.Thread { runners.loops[index].run() })
            } catch {
                Log.error("cannot start thread: \(error)")
                return 1
            }
        }
        // Reloads run on this thread; at a lower priority they take spare CPU rather than serving CPU
        // (the event-loop threads, already started, keep the normal priority).
        Posix.lowerCurrentThreadPriority()
        // Watching starts before readiness is announced: a change written right after it is seen.
        let supervisor = Supervisor(
            readInputs: readInputs,
            state: state,
            loops: loops,
            registry: registry,
            signals: signals,
            mainSockets: bound.main
        )
        for line in bound.announcements { Log.info(line) }
        if let acme {
            state.tellACME(state.current)
            // Suspended handshakes step again as soon as their certificate is in memory (or will not come).
            let handles = loops.map(\.handle)
            acme.whenCertificatesChange { for handle in handles { handle.epoll.wake() } }
            do {
                try acme.start()
            } catch {
                Log.error("\(error)")
            }
        }
        let sites = state.current.config.sites.count
        Log.info(
            "serving \(sites) site\(sites == 1 ? "" : "s") with \(threadCount) event loop\(threadCount == 1 ? "" : "s") "
                + "(\(loopsReason); config generation 1)"
        )
        state.storedLinks?.start(takeClicks: { registry.takeClicks() })
        PendingGzipForms.makeInBackground(in: state.snapshot, then: onCompressed)
        state.fetchLog.startSharing(snapshot: { [state] in state.snapshot })
        let loopHandles = loops.map(\.handle)
        state.linkAPI?.start(
            config: { [state] in state.current.config },
            wakeLoop: { loop in loopHandles[loop].epoll.wake() },
            changed: { [state] in state.storedLinks?.nudge() },
            policy: { [state] in state.snapshot.adminPolicy }
        )
        supervisor.announceReady()
        supervisor.run()
        state.linkAPI?.stop()

        for loop in loops {
            loop.stopped.store(true, ordering: .releasing)
            loop.epoll.wake()
        }
        for thread in threads { thread.join() }
        // After the loops: their last clicks are written before the process ends.
        state.storedLinks?.stop()
        state.fetchLog.stopSharing()
        acme?.stop()
        supervisor.closeListeners()
        if let admin = bound.admin { Posix.close(admin.fd) }
        Log.info("stopped")
        return 0
    }
}

/// Hands the loops to their threads; each loop is touched by exactly one thread after start-up (the
/// supervisor only wakes them and reads their atomics).
private final class LoopHandoff: @unchecked Sendable {
    let loops: [EventLoop]
    init(_ loops: [EventLoop]) { self.loops = loops }
}
