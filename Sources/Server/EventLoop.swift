import AASA
import HTTP1
import Posix
import Synchronization
import TLS

/// A listening socket owned by one loop.
struct ListenerSocket {
    var fd: Int32
    var isAdmin: Bool
    var proxyProtocol: Bool
    var tls: Bool
}

/// Settings the loops read on every request, in the units they use.
struct LoopSettings: Sendable {
    var limits: HTTPLimits
    var headerTimeout: Int64
    var keepAliveTimeout: Int64
    var writeTimeout: Int64
    var maxConnections: Int
    var maxRequestsPerConnection: Int
    var accessLog: Bool
    var trustForwardedHeaders: Bool

    init(_ settings: ServerSettings) {
        limits = HTTPLimits(
            requestLineBytes: settings.maxRequestLineBytes,
            headerBytes: settings.maxHeaderBytes,
            headerCount: settings.maxHeaderCount,
            bodyBytes: settings.maxBodyBytes
        )
        headerTimeout = Int64(settings.headerTimeout * 1000)
        keepAliveTimeout = Int64(settings.keepAliveTimeout * 1000)
        writeTimeout = Int64(settings.writeTimeout * 1000)
        maxConnections = settings.maxConnections
        maxRequestsPerConnection = settings.maxRequestsPerConnection
        accessLog = settings.accessLog
        trustForwardedHeaders = settings.trustForwardedHeaders
    }
}

/// Every loop's counters, so the admin listener (on loop 0) can merge them.
final class StatsRegistry: Sendable {
    /// A Mutex cannot live in an array (it is not copyable), so each sits in its own box.
    final class Box: Sendable {
        let stats = Mutex(LoopStats())
    }

    let loops: [Box]

    init(count: Int) { loops = (0..<count).map { _ in Box() } }

    func merged() -> LoopStats {
        var total = LoopStats()
        for loop in loops { loop.stats.withLock { total.merge($0) } }
        return total
    }
}

/// One thread's epoll loop: accepts on its own listeners, reads, parses, answers from the snapshot,
/// writes, and enforces timeouts. Nothing here blocks except `epoll_wait`.
final class EventLoop {
    static let listenerTokenBase: UInt64 = 1 << 40
    /// How often deadlines are checked; timeouts are accurate to this.
    static let sweepInterval: Int64 = 100
    /// Bytes of output beyond which a connection stops parsing pipelined requests until it drains.
    static let outputHighWater = 256 * 1024

    let index: Int
    let epoll: Epoll
    let state: ServerState
    let settings: LoopSettings
    let statsBox: StatsRegistry.Box
    let registry: StatsRegistry
    private(set) var listeners: [ListenerSocket]
    private var connections: [Connection?] = []
    private var freeSlots: [Int] = []
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    private var now: Int64 = Posix.monotonicMilliseconds()
    private var lastSweep: Int64 = 0
    private var dateSecond = -1
    private var dateLine: [UInt8] = []
    private var isoSecond = ""
    private var accessLog: [UInt8] = []
    private var observedDraining = false
    let stopped = Atomic<Bool>(false)
    let drained = Atomic<Bool>(false)
    /// Set once this loop no longer uses the main listening sockets (during a drain).
    let releasedListeners = Atomic<Bool>(false)
    private(set) var mainConnectionCount = 0

    init(index: Int, listeners: [ListenerSocket], state: ServerState, settings: LoopSettings, registry: StatsRegistry) throws(SystemError) {
        self.index = index
        self.listeners = listeners
        self.state = state
        self.settings = settings
        self.registry = registry
        statsBox = registry.loops[index]
        epoll = try Epoll()
        for (position, listener) in listeners.enumerated() {
            try epoll.addShared(listener.fd, token: EventLoop.listenerTokenBase + UInt64(position))
        }
    }

    // MARK: - Running

    func run() {
        while !stopped.load(ordering: .acquiring) {
            do {
                try epoll.wait(timeoutMilliseconds: Int32(EventLoop.sweepInterval)) { event in handle(event) }
            } catch {
                Log.error("event loop \(index): \(error)")
            }
            now = Posix.monotonicMilliseconds()
            if now - lastSweep >= EventLoop.sweepInterval {
                lastSweep = now
                sweep()
            }
            if state.draining.load(ordering: .relaxed) { drainStep() }
            flushAccessLog()
        }
        for connection in connections.compactMap({ $0 }) { close(connection) }
        flushAccessLog()
    }

    private func handle(_ event: Epoll.Event) {
        if event.token == Epoll.wakeToken {
            deliverAdminReloadResults()
            return
        }
        if event.token >= EventLoop.listenerTokenBase {
            acceptConnections(Int(event.token - EventLoop.listenerTokenBase))
            return
        }
        let slot = Int(event.token)
        guard slot < connections.count, let connection = connections[slot] else { return }
        now = Posix.monotonicMilliseconds()
        if event.writable && connection.tlsWantsWrite {
            readable(connection)
            return
        }
        if event.writable && connection.hasPendingOutput { flush(connection) }
        if connections[slot] === connection && event.readable { readable(connection) }
    }

    // MARK: - Accepting

    private func acceptConnections(_ position: Int) {
        let listener = listeners[position]
        guard listener.fd >= 0 else { return }
        // A bounded batch per wake-up keeps one busy listener from starving established connections.
        for _ in 0..<64 {
            let result: Posix.AcceptResult
            do {
                result = try Posix.accept(listener.fd)
            } catch {
                // EMFILE/ENFILE: out of descriptors. Log and let the backlog wait for the next wake-up.
                Log.error("accept: \(error)")
                return
            }
            guard case .accepted(let fd, let peer) = result else { return }
            now = Posix.monotonicMilliseconds()
            if !listener.isAdmin && state.openConnections.load(ordering: .relaxed) >= settings.maxConnections {
                if !evictOne() {
                    Posix.abort(fd)
                    continue
                }
            }
            let slot = freeSlots.popLast() ?? connections.count
            if slot == connections.count { connections.append(nil) }
            let connection = Connection(
                fd: fd,
                slot: slot,
                peer: peer,
                isAdmin: listener.isAdmin,
                proxyProtocol: listener.proxyProtocol,
                limits: settings.limits,
                now: now,
                headerTimeout: settings.headerTimeout
            )
            connection.serial = nextSerial
            nextSerial += 1
            if listener.tls {
                guard let session = state.current.tls?.session(fd: fd) else {
                    Posix.abort(fd)
                    freeSlots.append(slot)
                    continue
                }
                connection.tls = session
            }
            connections[slot] = connection
            if !listener.isAdmin {
                mainConnectionCount += 1
                state.openConnections.add(1, ordering: .relaxed)
            }
            acceptedSinceStats += 1
            // Optimistic read: on a fresh connection the request is usually already here, so a
            // one-shot exchange (Connection: close) completes without ever touching epoll.
            readable(connection)
            if connections[slot] === connection && !connection.registered {
                updateInterest(connection)
            }
        }
    }

    /// At the connection cap: close an idle keep-alive connection, else the oldest one still sending its
    /// header (the slowloris suspect). Returns false when this loop has neither.
    private func evictOne() -> Bool {
        var oldestIdle: Connection?
        var oldestReading: Connection?
        for case let connection? in connections where !connection.isAdmin {
            if connection.isIdle {
                if oldestIdle == nil || (connection.idleSince ?? 0) < (oldestIdle?.idleSince ?? 0) { oldestIdle = connection }
            } else if case .head = connection.phase, !connection.hasPendingOutput {
                if oldestReading == nil || connection.headerDeadline < (oldestReading?.headerDeadline ?? 0) {
                    oldestReading = connection
                }
            }
        }
        guard let victim = oldestIdle ?? oldestReading else { return false }
        statsBox.stats.withLock { $0.connectionsEvicted += 1 }
        abort(victim)
        return true
    }

    // MARK: - Reading and answering

    private var nextSerial = 1

    /// Accepted-connection count not yet folded into the shared stats (saves a lock per accept).
    private var acceptedSinceStats = 0

    /// Registers the connection with epoll, or updates its interest: readable unless reading stopped,
    /// writable while output is pending.
    private func updateInterest(_ connection: Connection) {
        let wantsWrite = connection.hasPendingOutput || connection.tlsWantsWrite
        do {
            if connection.registered {
                try epoll.modify(connection.fd, token: UInt64(connection.slot), readable: connection.readingEnabled, writable: wantsWrite)
            } else {
                try epoll.add(connection.fd, token: UInt64(connection.slot), readable: connection.readingEnabled, writable: wantsWrite)
                connection.registered = true
            }
            connection.wantsWrite = wantsWrite
        } catch {
            abort(connection)
        }
    }

    private func readable(_ connection: Connection) {
        // Backpressure: a client that pipelines requests but does not read the answers is not read
        // from either, so neither its input nor its output can grow without bound.
        if connection.output.count - connection.outputOffset >= EventLoop.outputHighWater {
            if connection.readingEnabled {
                connection.readingEnabled = false
                connection.pausedForBackpressure = true
                updateInterest(connection)
            }
            return
        }
        if let tls = connection.tls, !tls.handshakeDone {
            switch tls.handshake() {
            case .done:
                if connection.tlsWantsWrite {
                    connection.tlsWantsWrite = false
                    updateInterest(connection)
                }
            case .wantRead:
                if connection.tlsWantsWrite {
                    connection.tlsWantsWrite = false
                    updateInterest(connection)
                }
                return
            case .wantWrite:
                connection.tlsWantsWrite = true
                updateInterest(connection)
                return
            case .failed, .closed:
                // Plain HTTP on a TLS port, an unsupported protocol version, or a client that gave up.
                abort(connection)
                return
            }
        }
        let result = read(connection)
        switch result {
        case .wouldBlock:
            return
        case .closed:
            connection.peerClosed = true
        case .bytes(let count):
            if case .lingering = connection.phase { return }
            if connection.input.isEmpty && connection.idleSince != nil {
                // The first byte of a new request starts its header clock (not reset by later bytes).
                connection.idleSince = nil
                connection.headerDeadline = now + settings.headerTimeout
            }
            if connection.input.isEmpty && settings.accessLog {
                connection.requestStartMicros = Int64(Posix.unixTime() * 1e6)
            }
            connection.input.append(contentsOf: scratch[0..<count])
        }
        if case .lingering = connection.phase {
            if connection.peerClosed { close(connection) }
            return
        }
        process(connection)
        if connections[connection.slot] !== connection { return }
        flush(connection)
        if connections[connection.slot] !== connection { return }
        if let tls = connection.tls, tls.pendingBytes > 0, !connection.peerClosed {
            // OpenSSL already holds decrypted bytes that no socket event will announce.
            readable(connection)
            return
        }
        if connection.peerClosed {
            // A half-closed client is still answered; once everything it asked for is written, we close.
            if !connection.hasPendingOutput {
                close(connection)
            } else if connection.readingEnabled {
                connection.readingEnabled = false
                updateInterest(connection)
            }
        }
    }

    /// One read from the socket, through TLS when the connection has it.
    private func read(_ connection: Connection) -> Posix.IOResult {
        if let tls = connection.tls {
            switch scratch.withUnsafeMutableBytes({ tls.read(into: $0) }) {
            case .bytes(let count): return .bytes(count)
            case .wouldBlock: return .wouldBlock
            case .closed, .failed: return .closed
            }
        }
        do {
            return try scratch.withUnsafeMutableBytes { try Posix.read(connection.fd, into: $0) }
        } catch {
            return .closed
        }
    }

    /// One write of pending output, through TLS when the connection has it; nil means the connection failed.
    private func write(_ connection: Connection) -> Posix.IOResult? {
        connection.output.withUnsafeBytes { raw -> Posix.IOResult? in
            let pending = UnsafeRawBufferPointer(rebasing: raw[connection.outputOffset...])
            if let tls = connection.tls {
                switch tls.write(pending) {
                case .bytes(let count): return .bytes(count)
                case .wouldBlock: return .wouldBlock
                case .closed, .failed: return nil
                }
            }
            return try? Posix.write(connection.fd, pending)
        }
    }

    private func process(_ connection: Connection) {
        let snapshot = state.current
        while !connection.closeAfterWrite && connection.output.count < EventLoop.outputHighWater
            && connection.awaitingAdminReload == nil
        {
            switch connection.phase {
            case .lingering:
                return
            case .proxyHeader:
                let result = connection.input.withUnsafeBufferPointer { ProxyProtocol.parse($0) }
                switch result {
                case .incomplete: return
                case .failed(let reason):
                    Log.error("closing \(connection.peer): \(reason)")
                    abort(connection)
                    return
                case .complete(let client, let length):
                    if let client { connection.peer = client }
                    connection.input.removeFirst(length)
                    connection.phase = .head
                }
            case .body(var discarder):
                let result = connection.input.withUnsafeBufferPointer { discarder.consume($0, from: 0) }
                switch result {
                case .needMore:
                    connection.input.removeAll(keepingCapacity: true)
                    connection.phase = .body(discarder)
                    return
                case .done(let end):
                    connection.input.removeFirst(end)
                    connection.phase = .head
                    requestFinished(connection)
                case .failed:
                    // The response is already queued; the framing after it is unknowable, so close.
                    connection.closeAfterWrite = true
                    return
                }
            case .head:
                if connection.input.isEmpty {
                    releaseInputIfIdle(connection)
                    return
                }
                let outcome = connection.input.withUnsafeBufferPointer { buffer -> Bool in
                    switch connection.parser.parse(buffer) {
                    case .incomplete:
                        return false
                    case .failed(let error):
                        respondWithStatus(connection, error)
                        return false
                    case .complete(let head):
                        connection.parser.reset()
                        answer(connection, head, buffer, snapshot)
                        return true
                    }
                }
                if !outcome { return }
            }
        }
    }

    /// Frees the read buffer of a connection waiting for its next request (idle memory stays small).
    private func releaseInputIfIdle(_ connection: Connection) {
        if connection.input.capacity > 4096 { connection.input = [] }
    }

    private func requestFinished(_ connection: Connection) {
        if connection.input.isEmpty && !connection.closeAfterWrite { connection.idleSince = now }
    }

    private func answer(_ connection: Connection, _ head: RequestHead, _ buffer: UnsafeBufferPointer<UInt8>, _ snapshot: Snapshot) {
        connection.requests += 1
        let draining = observedDraining
        let close =
            !head.keepAlive || connection.requests >= settings.maxRequestsPerConnection || draining || connection.peerClosed
        let response: PreparedResponse
        var siteLabel = "-"
        var pathClass = PathClass.other
        if connection.isAdmin && head.method == .post
            && Router.equal(UnsafeBufferPointer(rebasing: buffer[head.pathRange]), EventLoop.reloadPath)
        {
            // The reload runs on the main thread; the answer is written when it is done.
            connection.awaitingAdminReload = (close, head.isHTTP10 && !close, false)
            let ticket = AdminReloadTicket(loop: index, slot: connection.slot, serial: connection.serial)
            state.adminReloadRequests.withLock { $0.append(ticket) }
            Posix.signalEventFD(state.mainWakeFD)
            connection.input.removeFirst(head.length)
            if case .length(let length) = head.body, length <= settings.limits.bodyBytes {
                connection.phase = .body(BodyDiscarder(head.body, limit: settings.limits.bodyBytes))
            }
            return
        } else if connection.isAdmin {
            response = adminResponse(head, buffer, snapshot)
        } else {
            let routed = Router.route(head, buffer, snapshot)
            response = routed.response
            siteLabel = routed.siteLabel
            pathClass = routed.pathClass
        }
        if !close && !connection.noDelay {
            // Keep-alive: later small responses must not wait for the client's delayed ACK (Nagle).
            Posix.setNoDelay(connection.fd)
            connection.noDelay = true
        }
        // A declared body over the limit is refused before anything else is answered for this request.
        if case .length(let length) = head.body, length > settings.limits.bodyBytes {
            connection.input.removeFirst(head.length)
            respondWithStatus(connection, .payloadTooLarge)
            return
        }
        let isHead = head.method == .head
        let written = append(response, to: connection, close: close, keepAliveHeader: head.isHTTP10 && !close, includeBody: !isHead)
        if close { connection.closeAfterWrite = true }

        // Discard a body the client sent (GET/HEAD need none) before the next request.
        var bodyFollows = false
        switch head.body {
        case .none: break
        case .length, .chunked:
            bodyFollows = true
        }
        if !connection.isAdmin {
            record(connection, head, buffer, status: response.status, bytes: written, site: siteLabel, pathClass: pathClass)
        }
        connection.input.removeFirst(head.length)
        if bodyFollows {
            connection.phase = .body(BodyDiscarder(head.body, limit: settings.limits.bodyBytes))
        } else {
            requestFinished(connection)
        }
    }

    @discardableResult
    private func append(_ response: PreparedResponse, to connection: Connection, close: Bool, keepAliveHeader: Bool, includeBody: Bool) -> Int {
        refreshDate()
        let before = connection.output.count
        connection.output.append(contentsOf: response.head)
        connection.output.append(contentsOf: dateLine)
        if close {
            connection.output.append(contentsOf: EventLoop.connectionClose)
        } else if keepAliveHeader {
            connection.output.append(contentsOf: EventLoop.connectionKeepAlive)
        }
        connection.output.append(contentsOf: EventLoop.crlf)
        if includeBody { connection.output.append(contentsOf: response.body) }
        return connection.output.count - before
    }

    static let connectionClose = Array("Connection: close\r\n".utf8)
    static let connectionKeepAlive = Array("Connection: keep-alive\r\n".utf8)
    static let crlf: [UInt8] = [0x0D, 0x0A]

    private func respondWithStatus(_ connection: Connection, _ error: HTTPError) {
        let response = PreparedResponse.json(status: error.status, "{\"error\":\"\(jsonEscape(error.detail))\"}")
        let written = append(response, to: connection, close: true, keepAliveHeader: false, includeBody: true)
        connection.closeAfterWrite = true
        connection.requests += 1
        if !connection.isAdmin {
            statsBox.stats.withLock {
                $0.requests[LoopStats.RequestKey(site: "-", pathClass: .other, status: error.status), default: 0] += 1
                $0.responseBytes += written
            }
            if settings.accessLog {
                logLine(client: connection.peer, host: "-", method: "-", target: "-", status: error.status, bytes: written, userAgent: "-", start: connection.requestStartMicros)
            }
        }
    }

    private func record(
        _ connection: Connection,
        _ head: RequestHead,
        _ buffer: UnsafeBufferPointer<UInt8>,
        status: Int,
        bytes: Int,
        site: String,
        pathClass: PathClass
    ) {
        let isBot = head.userAgentRange.map { range in
            range.count >= 9 && Router.equal(UnsafeBufferPointer(rebasing: buffer[range.lowerBound..<(range.lowerBound + 9)]), EventLoop.botPrefix)
        } ?? false
        let wallTime = isBot ? Posix.unixTime() : 0
        statsBox.stats.withLock { stats in
            stats.requests[LoopStats.RequestKey(site: site, pathClass: pathClass, status: status), default: 0] += 1
            stats.responseBytes += bytes
            if isBot && pathClass == .aasa {
                stats.botFetches[site, default: 0] += 1
                stats.botLastFetch[site] = wallTime
            }
        }
        guard settings.accessLog else { return }
        func text(_ range: Range<Int>?) -> String {
            range.map { String(decoding: UnsafeBufferPointer(rebasing: buffer[$0]), as: UTF8.self) } ?? "-"
        }
        var client = connection.peer
        if settings.trustForwardedHeaders, let forwarded = head.forwardedForRange {
            client = text(forwarded).split(separator: ",").first.map { String($0).trimmingSpaces() } ?? client
        }
        let method = head.method == .unknown ? text(head.methodRange) : head.method.name
        logLine(
            client: client,
            host: text(head.hostRange),
            method: method,
            target: text(head.targetRange),
            status: status,
            bytes: bytes,
            userAgent: text(head.userAgentRange),
            start: connection.requestStartMicros
        )
    }

    static let botPrefix = Array("AASA-Bot/".utf8)
    static let reloadPath = Array("/reload".utf8)

    /// Writes the answers of finished `POST /reload` requests that belong to this loop.
    private func deliverAdminReloadResults() {
        let mine = state.adminReloadResults.withLock { results -> [(AdminReloadTicket, String)] in
            let taken = results.filter { $0.0.loop == index }
            results.removeAll { $0.0.loop == index }
            return taken
        }
        for (ticket, body) in mine {
            guard ticket.slot < connections.count, let connection = connections[ticket.slot], connection.serial == ticket.serial,
                let pending = connection.awaitingAdminReload
            else { continue }
            connection.awaitingAdminReload = nil
            let status = body.contains("\"result\":\"reloaded\"") ? 200 : 422
            append(PreparedResponse.json(status: status, body), to: connection, close: pending.close, keepAliveHeader: pending.keepAliveHeader, includeBody: true)
            if pending.close { connection.closeAfterWrite = true }
            if case .head = connection.phase { requestFinished(connection) }
            process(connection)
            if connections[connection.slot] === connection { flush(connection) }
        }
    }

    // MARK: - Admin listener

    private func adminResponse(_ head: RequestHead, _ buffer: UnsafeBufferPointer<UInt8>, _ snapshot: Snapshot) -> PreparedResponse {
        let path = String(decoding: UnsafeBufferPointer(rebasing: buffer[head.pathRange]), as: UTF8.self)
        if path == "/reload" {
            return PreparedResponse.json(status: 405, #"{"error":"use POST /reload"}"#, extraHeaders: [("Allow", "POST")])
        }
        guard head.method == .get || head.method == .head else {
            if head.method == .unknown { return snapshot.notImplemented }
            return ["/healthz", "/readyz", "/metrics"].contains(path) ? snapshot.methodNotAllowed : snapshot.notFound
        }
        switch path {
        case "/healthz":
            return snapshot.health
        case "/readyz":
            if state.draining.load(ordering: .relaxed) {
                return PreparedResponse.json(status: 503, #"{"status":"draining"}"#)
            }
            let failed = state.lastReloadFailed.load(ordering: .relaxed)
            return PreparedResponse.json(
                status: 200,
                "{\"status\":\"ready\",\"generation\":\(snapshot.generation),\"lastReloadFailed\":\(failed)}"
            )
        case "/metrics":
            let text = MetricsRenderer.render(registry.merged(), state: state)
            return PreparedResponse(
                status: 200,
                headers: [("Server", "aasa-server"), ("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")],
                body: Array(text.utf8)
            )
        default:
            return snapshot.notFound
        }
    }

    // MARK: - Writing

    private func flush(_ connection: Connection) {
        while connection.outputOffset < connection.output.count {
            guard let result = write(connection) else {
                abort(connection)
                return
            }
            switch result {
            case .bytes(let count):
                connection.outputOffset += count
                connection.writeDeadline = nil
            case .wouldBlock, .closed:
                if connection.writeDeadline == nil { connection.writeDeadline = now + settings.writeTimeout }
                if !connection.wantsWrite || !connection.registered { updateInterest(connection) }
                return
            }
        }
        // Everything written.
        if connection.output.capacity > 64 * 1024 {
            connection.output = []
        } else {
            connection.output.removeAll(keepingCapacity: true)
        }
        connection.outputOffset = 0
        connection.writeDeadline = nil
        if connection.pausedForBackpressure {
            connection.pausedForBackpressure = false
            connection.readingEnabled = true
        }
        if connection.wantsWrite || !connection.readingEnabled { updateInterest(connection) }
        if connection.closeAfterWrite {
            finishClosing(connection)
        } else if !connection.input.isEmpty, case .head = connection.phase {
            // Pipelined requests held back by the output high-water mark.
            process(connection)
            if connections[connection.slot] === connection && connection.hasPendingOutput { flush(connection) }
        }
    }

    /// Close after the last response: at once when the client sent nothing more, else with a short
    /// linger so unread request bytes do not turn our answer into a reset.
    private func finishClosing(_ connection: Connection) {
        if connection.input.isEmpty || connection.peerClosed {
            close(connection)
            return
        }
        Posix.shutdownWrite(connection.fd)
        connection.phase = .lingering
        connection.input = []
        connection.lingerDeadline = now + 2000
    }

    // MARK: - Timeouts and closing

    private func sweep() {
        if acceptedSinceStats > 0 {
            let accepted = acceptedSinceStats
            acceptedSinceStats = 0
            statsBox.stats.withLock { $0.connectionsAccepted += accepted }
        }
        for case let connection? in connections {
            if case .lingering = connection.phase {
                if now >= connection.lingerDeadline ?? now { close(connection) }
                continue
            }
            if let deadline = connection.writeDeadline, now >= deadline {
                countTimeout("write")
                abort(connection)
                continue
            }
            if connection.hasPendingOutput { continue }
            if let idleSince = connection.idleSince, connection.input.isEmpty {
                if now - idleSince >= settings.keepAliveTimeout {
                    countTimeout("keepalive")
                    close(connection)
                }
                continue
            }
            if case .body = connection.phase {
                if now >= connection.headerDeadline + settings.headerTimeout {
                    countTimeout("body")
                    abort(connection)
                }
                continue
            }
            if now >= connection.headerDeadline {
                countTimeout("header")
                if connection.input.isEmpty {
                    abort(connection)
                } else {
                    // Tell a slow (or slowloris) client why before closing.
                    respondWithStatus(connection, .requestTimeout)
                    flush(connection)
                }
            }
        }
    }

    private func countTimeout(_ kind: String) {
        statsBox.stats.withLock { $0.timeouts[kind, default: 0] += 1 }
    }

    private func drainStep() {
        if !observedDraining {
            observedDraining = true
            // Stop accepting on the main listeners (the admin listener stays, for /readyz). The sockets
            // are shared by all loops, so the main thread closes them once every loop has let go.
            for position in listeners.indices where !listeners[position].isAdmin && listeners[position].fd >= 0 {
                epoll.remove(listeners[position].fd)
                listeners[position].fd = -1
            }
            releasedListeners.store(true, ordering: .releasing)
        }
        for case let connection? in connections where !connection.isAdmin {
            let waiting = connection.input.isEmpty && !connection.hasPendingOutput
            if waiting, case .head = connection.phase {
                close(connection)
            }
        }
        if mainConnectionCount == 0 { drained.store(true, ordering: .releasing) }
    }

    private func release(_ connection: Connection) {
        // No EPOLL_CTL_DEL: closing the only descriptor of a socket removes it from every epoll set.
        connections[connection.slot] = nil
        freeSlots.append(connection.slot)
        if !connection.isAdmin {
            mainConnectionCount -= 1
            state.openConnections.subtract(1, ordering: .relaxed)
        }
    }

    private func close(_ connection: Connection) {
        guard connections[connection.slot] === connection else { return }
        release(connection)
        if let tls = connection.tls, tls.handshakeDone { tls.shutdown() }
        connection.tls = nil
        Posix.close(connection.fd)
    }

    private func abort(_ connection: Connection) {
        guard connections[connection.slot] === connection else { return }
        release(connection)
        connection.tls = nil
        Posix.abort(connection.fd)
    }

    // MARK: - Date and access log

    private func refreshDate() {
        let wall = Posix.unixTime()
        let second = Int(wall)
        if second != dateSecond {
            dateSecond = second
            dateLine = Array("Date: \(HTTPDate.format(unixSeconds: second))\r\n".utf8)
            isoSecond = isoTimestamp(second)
        }
    }

    private func logLine(client: String, host: String, method: String, target: String, status: Int, bytes: Int, userAgent: String, start: Int64) {
        refreshDate()
        let nowMicros = Int64(Posix.unixTime() * 1e6)
        let duration = start > 0 ? max(0, nowMicros - start) : 0
        let milliseconds = Int(nowMicros / 1000 % 1000)
        var line = "{\"time\":\"\(isoSecond).\(MetricsRenderer.pad(milliseconds, 3))Z\",\"client\":\"\(jsonEscape(client))\""
        line += ",\"host\":\"\(jsonEscape(host))\",\"method\":\"\(jsonEscape(method))\",\"path\":\"\(jsonEscape(target))\""
        line += ",\"status\":\(status),\"bytes\":\(bytes),\"userAgent\":\"\(jsonEscape(userAgent))\",\"durationMicros\":\(duration)}\n"
        accessLog.append(contentsOf: line.utf8)
    }

    private func flushAccessLog() {
        guard !accessLog.isEmpty else { return }
        Posix.writeAll(1, accessLog)
        accessLog.removeAll(keepingCapacity: accessLog.capacity <= 1 << 20)
    }
}

/// `2026-11-30T13:00:00` for a Unix second (UTC).
func isoTimestamp(_ second: Int) -> String {
    let http = HTTPDate.format(unixSeconds: second)  // "Sun, 06 Nov 1994 08:49:37 GMT"
    let parts = http.split(separator: " ")
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    let month = (months.firstIndex(of: String(parts[2])) ?? 0) + 1
    return "\(parts[3])-\(month < 10 ? "0" : "")\(month)-\(parts[1])T\(parts[4])"
}

/// Escapes text for a JSON string (logs, error bodies); bytes that are not valid UTF-8 were already replaced.
func jsonEscape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if scalar.value < 0x20 || scalar.value == 0x7F {
                let digits = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}

extension String {
    func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
