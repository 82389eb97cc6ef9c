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
        case loaded(LoadedConfig, tls: TLSContexts?, microseconds: Int)
        case rejected([String])
    }

    /// Runs until drained; returns the process exit status. `initial` has already been validated;
    /// `reload` re-reads the config for SIGHUP.
    public static func run(
        initial: LoadedConfig,
        tls: TLSContexts?,
        loadMicroseconds: Int,
        options: Options,
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
        let state = ServerState(
            snapshot: Snapshot(config: initial, settings: settings, tls: tls, generation: 1, now: startedAt),
            startedAt: startedAt
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
                let bound = try Posix.listen(address: listener.address, port: listener.port, reusePort: false)
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
        for line in announcements { Log.info(line) }
        Log.info(
            "serving \(initial.sites.count) site\(initial.sites.count == 1 ? "" : "s") with \(threadCount) "
                + "event loop\(threadCount == 1 ? "" : "s") (config generation 1)"
        )

        // The main thread only waits for signals.
        var drainDeadline: Int64?
        while true {
            let signal = SignalFD.next(signals, timeoutMilliseconds: 100)
            if let deadline = drainDeadline {
                if !mainSockets.isEmpty && loops.allSatisfy({ $0.releasedListeners.load(ordering: .acquiring) }) {
                    for socket in mainSockets { Posix.close(socket.fd) }
                    mainSockets = []
                }
                let allDrained = loops.allSatisfy { $0.drained.load(ordering: .acquiring) }
                if allDrained || Posix.monotonicMilliseconds() >= deadline || signal == SIGTERM || signal == SIGINT {
                    if !allDrained { Log.info("drain timeout reached; closing the remaining connections") }
                    break
                }
                continue
            }
            switch signal {
            case SIGHUP?:
                applyReload(reload(), state: state, settings: settings)
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

    static func applyReload(_ result: LoadResult, state: ServerState, settings: ServerSettings) {
        switch result {
        case .rejected(let lines):
            state.reloadFailures.add(1, ordering: .relaxed)
            state.lastReloadFailed.store(true, ordering: .relaxed)
            Log.error("reload rejected, still serving generation \(state.current.generation): " + (lines.first ?? "unknown error"))
            for line in lines.dropFirst() { Log.error("  " + line) }
        case .loaded(let loaded, let tls, let microseconds):
            let previous = state.current
            let next = Snapshot(
                config: loaded,
                settings: settings,
                tls: tls ?? previous.tls,
                generation: previous.generation + 1,
                now: Posix.unixTime(),
                previous: previous
            )
            state.snapshot.withLock { $0 = next }
            state.reloadSuccesses.add(1, ordering: .relaxed)
            state.lastReloadFailed.store(false, ordering: .relaxed)
            state.lastLoadMicroseconds.store(microseconds, ordering: .relaxed)
            let before = Set(previous.siteLabels)
            let after = Set(next.siteLabels)
            Log.info(
                "reloaded: generation \(next.generation), \(next.siteLabels.count) sites"
                    + " (added: \(after.subtracting(before).sorted().joined(separator: ", ").ifEmpty("none"))"
                    + "; removed: \(before.subtracting(after).sorted().joined(separator: ", ").ifEmpty("none")))"
            )
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
