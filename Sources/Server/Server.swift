public import AASA
import Glibc
public import TLS
import Posix
import Synchronization

/// Runs `serve`: binds every listener, starts one event loop per thread, and turns signals into
/// reloads (SIGHUP) and a graceful drain (SIGTERM, SIGINT).
public enum HTTPServer {
    public struct Options: Sendable {
        /// Replaces the config's main listeners (`--listen`).
        public var listen: [ServerSettings.Listener]?
        /// `.some(nil)` turns the admin listener off (`--admin off`).
        public var admin: ServerSettings.Listener??

        public init(listen: [ServerSettings.Listener]? = nil, admin: ServerSettings.Listener?? = nil) {
            self.listen = listen
            self.admin = admin
        }
    }

    /// The outcome of reading the config again: the loaded config, or the lines saying why not.
    public enum LoadResult: Sendable {
        /// `files`: every file the config read (itself, hosted documents, certificates), to watch.
        /// `replaced`: what the reload keeps no more, freed once the new snapshot is in force (freeing
        /// a large config takes milliseconds nobody should wait for).
        case loaded(LoadedConfig, tls: TLSContexts?, microseconds: Int, files: [String], replaced: LoadedConfig? = nil)
        case rejected([String])
    }

    /// Runs until drained; returns the process exit status. `initial` has already been validated;
    /// `reload` re-reads the config for SIGHUP.
    public static func run(
        initial: LoadedConfig,
        tls: TLSContexts?,
        loadMicroseconds: Int,
        options: Options,
        watchedFiles: [String] = [],
        reload: @escaping @Sendable () -> LoadResult,
        bindFailureHint: (Int32) -> String? = { _ in nil }
    ) -> Int32 {
        // Before any thread exists: these signals then arrive only through the signalfd.
        let signals = SignalFD.block([SIGHUP, SIGTERM, SIGINT])
        guard signals >= 0 else {
            Log.error("signalfd: \(SystemError(call: "signalfd", code: errno))")
            return 1
        }
        var settings = initial.config?.server ?? ServerSettings()
        // --listen replaces the plain listeners; TLS listeners stay as configured.
        if let listen = options.listen { settings.listeners = listen + settings.listeners.filter(\.tls) }
        if let admin = options.admin { settings.admin = admin }

        let fileLimit = Posix.raiseOpenFileLimit()
        if fileLimit < settings.maxConnections + 64 {
            Log.error(
                "the open-file limit is \(fileLimit), below maxConnections (\(settings.maxConnections)) plus headroom; "
                    + "raise it (systemd LimitNOFILE=, docker --ulimit nofile=) or lower maxConnections"
            )
        }
        let startedAt = Posix.unixTime()
        let mainWake = Posix.makeEventFD()
        let state = ServerState(
            snapshot: Snapshot(config: initial, settings: settings, tls: tls, generation: 1, now: startedAt),
            startedAt: startedAt,
            mainWakeFD: mainWake
        )
        state.lastLoadMicroseconds.store(loadMicroseconds, ordering: .relaxed)
        let threadCount = settings.threads ?? Posix.cpuCount()

        // Bind everything first: a port in use must leave nothing listening. One socket per address,
        // shared by all loops (EPOLLEXCLUSIVE), rather than SO_REUSEPORT: with reuse-port a second
        // server started by mistake would silently share the port instead of failing.
        var mainSockets: [ListenerSocket] = []
        var adminSocket: ListenerSocket?
        var announcements: [String] = []
        func closeAll() {
            for socket in mainSockets { Posix.close(socket.fd) }
            if let adminSocket { Posix.close(adminSocket.fd) }
        }
        do {
            for listener in settings.listeners {
                let bound: (fd: Int32, port: Int)
                do {
                    bound = try Posix.listen(address: listener.address, port: listener.port, reusePort: false)
                } catch where (error.code == EAFNOSUPPORT || error.code == EADDRNOTAVAIL) && listener.address == "::"
                    && !settings.listenersConfigured && options.listen == nil
                {
                    // The default listeners include IPv6; a machine without it still serves IPv4.
                    Log.info("IPv6 is not available here (\(error.reason.lowercased())); listening on IPv4 only")
                    continue
                }
                mainSockets.append(ListenerSocket(fd: bound.fd, isAdmin: false, proxyProtocol: listener.proxyProtocol, tls: listener.tls))
                let shown = ServerSettings.Listener(address: listener.address, port: bound.port).description
                announcements.append(
                    "listening on \(listener.tls ? "https" : "http")://\(shown)" + (listener.proxyProtocol ? " (PROXY protocol)" : "")
                )
            }
            if let admin = settings.admin {
                let bound = try Posix.listen(address: admin.address, port: admin.port, reusePort: false)
                adminSocket = ListenerSocket(fd: bound.fd, isAdmin: true, proxyProtocol: false, tls: false)
                announcements.append(
                    "admin on http://\(ServerSettings.Listener(address: admin.address, port: bound.port).description) "
                        + "(/healthz, /readyz, /metrics)"
                )
            }
        } catch {
            closeAll()
            var hint: String
            switch error.code {
            case EADDRINUSE: hint = " — another process is listening there; pick another port with --listen"
            case EACCES: hint = " — ports below 1024 need root or CAP_NET_BIND_SERVICE"
            case EADDRNOTAVAIL: hint = " — that address is not configured on this machine"
            default: hint = ""
            }
            if let specific = bindFailureHint(error.code) { hint = specific }
            Log.error("cannot listen: \(error)\(hint)")
            return 1
        }
        var perLoop = [[ListenerSocket]](repeating: mainSockets, count: threadCount)
        if let adminSocket { perLoop[0].append(adminSocket) }

        let registry = StatsRegistry(count: threadCount)
        let loopSettings = LoopSettings(settings)
        var loops: [EventLoop] = []
        do {
            for index in 0..<threadCount {
                let loop = try EventLoop(index: index, listeners: perLoop[index], state: state, settings: loopSettings, registry: registry)
                loops.append(loop)
            }
        } catch {
            closeAll()
            Log.error("cannot start event loops: \(error)")
            return 1
        }
        let runners = UncheckedBox(loops)
        var threads: [Posix.Thread] = []
        for index in 0..<threadCount {
            do {
                threads.append(try Posix.Thread { runners.value[index].run() })
            } catch {
                Log.error("cannot start thread: \(error)")
                return 1
            }
        }
        // Reloads run on this thread; at a lower priority they take spare CPU rather than serving CPU
        // (the event-loop threads, already started, keep the normal priority).
        Posix.lowerCurrentThreadPriority()
        for line in announcements { Log.info(line) }
        Log.info(
            "serving \(initial.sites.count) site\(initial.sites.count == 1 ? "" : "s") with \(threadCount) "
                + "event loop\(threadCount == 1 ? "" : "s") (config generation 1)"
        )

        // The main thread waits for signals, file changes and admin reload requests; it does the
        // reloading, so the event loops never stall on it.
        var files = watchedFiles
        var watcher = settings.watchFiles && !settings.forcePolling ? FileWatcher(files: files) : nil
        var fingerprint = Fingerprint(files: files)
        var nextPoll = Posix.monotonicMilliseconds() + Int64(settings.pollInterval * 1000)
        if settings.watchFiles && watcher == nil && !files.isEmpty {
            Log.info(
                (settings.forcePolling ? "polling" : "inotify is unavailable; checking")
                    + " the config files every \(settings.pollInterval) s"
            )
        }
        var pendingReloadAt: Int64?
        var drainDeadline: Int64?
        // A reload frees what it replaced, but glibc keeps the pages; once reloads have been quiet for a
        // while they go back to the kernel. Not at once: reloads in quick succession would fault the same
        // pages in again each time.
        var releaseMemoryAt: Int64? = Posix.monotonicMilliseconds() + 1_000
        func reloadNow(_ trigger: String) -> String {
            let outcome = reloadAndApply(trigger)
            releaseMemoryAt = Posix.monotonicMilliseconds() + 5_000
            return outcome
        }
        func reloadAndApply(_ trigger: String) -> String {
            let started = Posix.monotonicMilliseconds()
            let result = reload()
            let outcome = applyReload(result, state: state, settings: settings, trigger: trigger, startedAt: started)
            if case .loaded(_, _, _, let newFiles, _) = result, newFiles != files {
                files = newFiles
                if settings.watchFiles && !settings.forcePolling { watcher = FileWatcher(files: files) }
            }
            fingerprint = Fingerprint(files: files)
            return outcome
        }
        while true {
            let ready = Posix.waitReadable([signals, mainWake] + (watcher.map { [$0.fd] } ?? []), timeoutMilliseconds: 50)
            var signal: Int32?
            if ready.contains(signals) { signal = SignalFD.next(signals, timeoutMilliseconds: 0) }
            let now = Posix.monotonicMilliseconds()
            if let deadline = drainDeadline {
                if !mainSockets.isEmpty && loops.allSatisfy({ $0.releasedListeners.load(ordering: .acquiring) }) {
                    for socket in mainSockets { Posix.close(socket.fd) }
                    mainSockets = []
                }
                let allDrained = loops.allSatisfy { $0.drained.load(ordering: .acquiring) }
                if allDrained || now >= deadline || signal == SIGTERM || signal == SIGINT {
                    if !allDrained { Log.info("drain timeout reached; closing the remaining connections") }
                    break
                }
                continue
            }
            if let watcher, ready.contains(watcher.fd), watcher.drain() {
                // Debounce: editors and deploy tools write in bursts; reload once they settle.
                pendingReloadAt = now + 200
            } else if watcher == nil && settings.watchFiles && !files.isEmpty && now >= nextPoll {
                nextPoll = now + Int64(settings.pollInterval * 1000)
                let current = Fingerprint(files: files)
                if current != fingerprint { pendingReloadAt = now }
            }
            if ready.contains(mainWake) {
                Posix.drainEventFD(mainWake)
                let tickets = state.adminReloadRequests.withLock { requests -> [AdminReloadTicket] in
                    defer { requests.removeAll() }
                    return requests
                }
                if !tickets.isEmpty {
                    let outcome = reloadNow("POST /reload")
                    state.adminReloadResults.withLock { $0 += tickets.map { ($0, outcome) } }
                    for loop in Set(tickets.map(\.loop)) { loops[loop].epoll.wake() }
                }
            }
            if let due = pendingReloadAt, now >= due {
                pendingReloadAt = nil
                _ = reloadNow("file change")
            }
            if let due = releaseMemoryAt, now >= due {
                releaseMemoryAt = nil
                Posix.releaseFreeMemory()
            }
            switch signal {
            case SIGHUP?:
                _ = reloadNow("SIGHUP")
            case SIGTERM?, SIGINT?:
                Log.info("draining: stopped accepting, finishing in-flight requests (up to \(settings.drainTimeout) s)")
                state.draining.store(true, ordering: .releasing)
                for loop in loops { loop.epoll.wake() }
                drainDeadline = Posix.monotonicMilliseconds() + Int64(settings.drainTimeout * 1000)
                // Close the listening sockets as soon as every loop has let go of them, so new
                // connections are refused (not left in the backlog) while the drain runs.
                let releaseDeadline = Posix.monotonicMilliseconds() + 1000
                while !loops.allSatisfy({ $0.releasedListeners.load(ordering: .acquiring) })
                    && Posix.monotonicMilliseconds() < releaseDeadline
                {
                    usleep(2000)
                }
                if loops.allSatisfy({ $0.releasedListeners.load(ordering: .acquiring) }) {
                    for socket in mainSockets { Posix.close(socket.fd) }
                    mainSockets = []
                }
            default:
                break
            }
        }
        for loop in loops {
            loop.stopped.store(true, ordering: .releasing)
            loop.epoll.wake()
        }
        for thread in threads { thread.join() }
        closeAll()
        Log.info("stopped")
        return 0
    }

    /// Publishes a good reload (one atomic swap) or keeps the running config; logs one line either way and
    /// returns the outcome as JSON for `POST /reload`.
    static func applyReload(_ result: LoadResult, state: ServerState, settings: ServerSettings, trigger: String, startedAt: Int64) -> String {
        state.lastReloadAttemptMilliseconds.store(Int(Posix.unixTime() * 1000), ordering: .relaxed)
        switch result {
        case .rejected(let lines):
            state.reloadFailures.add(1, ordering: .relaxed)
            state.lastReloadFailed.store(true, ordering: .relaxed)
            let generation = state.current.generation
            Log.error("reload (\(trigger)) rejected, still serving generation \(generation): " + (lines.first ?? "unknown error"))
            for line in lines.dropFirst() { Log.error("  " + line) }
            let errors = lines.map { "\"\(jsonEscape($0))\"" }.joined(separator: ",")
            return "{\"result\":\"rejected\",\"generation\":\(generation),\"errors\":[\(errors)]}"
        case .loaded(let loaded, let tls, let microseconds, _, _):
            let previous = state.current
            var applied = settings
            let incoming = loaded.config?.server ?? ServerSettings()
            // Settings that need new sockets or live in running connections wait for a restart.
            var restart: [String] = []
            if incoming.listeners != settings.listeners { restart.append("server.listen") }
            if incoming.admin != settings.admin { restart.append("server.admin") }
            if incoming.threads != settings.threads { restart.append("server.threads") }
            if incoming.maxConnections != settings.maxConnections || incoming.maxRequestsPerConnection != settings.maxRequestsPerConnection
                || incoming.maxRequestLineBytes != settings.maxRequestLineBytes || incoming.maxHeaderBytes != settings.maxHeaderBytes
                || incoming.maxHeaderCount != settings.maxHeaderCount || incoming.maxBodyBytes != settings.maxBodyBytes
            {
                restart.append("server limits")
            }
            if incoming.headerTimeout != settings.headerTimeout || incoming.keepAliveTimeout != settings.keepAliveTimeout
                || incoming.writeTimeout != settings.writeTimeout || incoming.drainTimeout != settings.drainTimeout
            {
                restart.append("server.timeouts")
            }
            if incoming.accessLog != settings.accessLog || incoming.trustForwardedHeaders != settings.trustForwardedHeaders {
                restart.append("server logging")
            }
            applied.cacheControl = incoming.cacheControl
            applied.healthPath = incoming.healthPath
            let next = Snapshot(
                config: loaded,
                settings: applied,
                tls: tls ?? previous.tls,
                generation: previous.generation + 1,
                now: Posix.unixTime(),
                previous: previous
            )
            state.snapshot.withLock { $0 = next }
            // From reading the first file to the new snapshot in force.
            let milliseconds = Posix.monotonicMilliseconds() - startedAt
            state.reloadSuccesses.add(1, ordering: .relaxed)
            state.lastReloadFailed.store(false, ordering: .relaxed)
            state.lastLoadMicroseconds.store(microseconds, ordering: .relaxed)
            let changes = next.changesFromPrevious
            var line = "reloaded (\(trigger)): generation \(next.generation) in \(milliseconds) ms; " + changes.summary
            if tls != nil && tls?.fingerprint != previous.tls?.fingerprint { line += "; certificates replaced" }
            if !restart.isEmpty { line += "; needs a restart to apply: " + restart.joined(separator: ", ") }
            Log.info(line)
            return "{\"result\":\"reloaded\",\"generation\":\(next.generation),\"milliseconds\":\(milliseconds),"
                + "\"changes\":\"\(jsonEscape(changes.summary))\",\"needsRestart\":[\(restart.map { "\"\(jsonEscape($0))\"" }.joined(separator: ","))]}"
        }
    }
}

/// Hands the loops to their threads; each loop is touched by exactly one thread after start-up.
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension String {
    func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
