import AASA
import ACME
import HTTP1
import Links
import Posix
import Synchronization
import TLS

/// One thread's epoll loop. It accepts on its listeners, then for every connection reports what the
/// socket did to the connection's state machine and carries out the actions it asks for. Nothing here
/// decides about the protocol, and nothing blocks except `epoll_wait`.
final class EventLoop {
    static let listenerTokenBase: UInt64 = 1 << 40
    /// How often deadlines are checked; timeouts are accurate to this.
    static let sweepMilliseconds: Int32 = 100

    let index: Int
    let epoll: Epoll
    let state: ServerState
    let settings: LoopSettings
    let stats: StatsRegistry.LoopCounters
    /// What other loops see of this one (its eviction candidate) and may ask of it.
    let handle: LoopHandle
    let registry: StatsRegistry
    let clock: LoopClock
    var listeners: [ListenerSocket]
    var connections: [Connection?] = []
    var freeSlots: [Int] = []
    /// Where every read lands. A connection's state machine parses and answers its requests where they
    /// were read (``ConnectionStateMachine/received(_:moreBuffered:)``) and copies what is left before it
    /// asks for another read or waits, so nothing else may write here: TLS writes gather elsewhere.
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    /// Where a TLS write's pieces are gathered (a TLS record holds up to 16 KB).
    private var tlsGather = [UInt8](repeating: 0, count: 16 * 1024)
    /// Where the per-send lines of queued answers are copied for `writev` (the rest goes by pointer).
    private let lineScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 8 * 1024, alignment: 8)
    private var gather = GatherList(capacity: 64)
    /// What is written in one go, up to ``copiedWriteLimit`` bytes in several pieces, is copied here first
    /// and sent with one `send` (``GatherList/writeCopied(to:through:)``).
    private let copiedWrite = UnsafeMutableRawBufferPointer.allocate(byteCount: EventLoop.copiedWriteLimit, alignment: 8)
    /// Where copying the pieces stops paying: a response of a few KB (a usual AASA with its header lines, a
    /// link's redirect) is copied; a larger one goes by `writev`, or from its file with `sendfile`.
    static let copiedWriteLimit = 4 * 1024
    /// The last answer sent whole, sent again from here while it is the one queued (``RenderedAnswer``).
    private let renderedAnswer = RenderedAnswer(capacity: EventLoop.copiedWriteLimit)
    var accessLog = AccessLog()
    private var lastSweep: Int64 = 0
    private var clockIsFresh = false
    /// The snapshot this loop answers from, kept from request to request while the server's generation
    /// stays the same: a request compares two numbers where it took the lock and retained the snapshot.
    /// Let go within a sweep (100 ms) of a reload even when no request comes.
    private(set) var snapshot: Snapshot
    private var snapshotGeneration: Int
    /// ``snapshot`` lent to the router without a retain and a release a request (``snapshot`` owns it).
    private var snapshotView: Unmanaged<Snapshot>
    /// The stored short links for this batch, read at the batch's first request (under the watcher's lock).
    private var batchStoredLinks: ShortLinkTable? {
        didSet { batchStoredLinksView = batchStoredLinks.map { Unmanaged.passUnretained($0) } }
    }
    /// ``batchStoredLinks`` lent to the router without a retain and a release a request, as ``snapshotView``.
    private var batchStoredLinksView: Unmanaged<ShortLinkTable>?
    /// Counters gathered during a batch, added to the shared ones once at its end (one lock per batch).
    var pendingStats = PendingStats()
    /// Link answers given lately, answered again without routing (this loop's own: no lock).
    let linkAnswers = LinkAnswerCache()
    /// The Host this loop matched last (a keep-alive connection sends the same one every time).
    let hostMemo = HostMemo()
    /// Which TLS connections keep their record buffers between requests.
    private var tlsBuffers = TLSBufferKeeping()
    private var observedDraining = false
    var nextSerial = 1
    /// Handshakes suspended until their certificate is ready (slot, serial): stepped again when the
    /// certificate manager wakes the loop, and at every tick until their wait's bound.
    private var certificateWaiters: [(slot: Int, serial: Int)] = []
    /// Connections accepted at the cap while another loop makes room (see `acceptConnections`).
    var waitingForRoom: [Arrival] = []
    private(set) var mainConnectionCount = 0

    let stopped = Atomic<Bool>(false)
    let drained = Atomic<Bool>(false)
    /// Set once this loop no longer uses the main listening sockets (during a drain).
    let releasedListeners = Atomic<Bool>(false)

    deinit {
        lineScratch.deallocate()
        copiedWrite.deallocate()
        readBuffer.deallocate()
    }

    init(index: Int, listeners: [ListenerSocket], state: ServerState, settings: LoopSettings, registry: StatsRegistry) throws(SystemError) {
        self.index = index
        self.listeners = listeners
        self.state = state
        self.settings = settings
        self.registry = registry
        stats = registry.loops[index]
        clock = LoopClock(now: Posix.monotonicMicroseconds(), unixSeconds: Int(Posix.unixTime()))
        snapshot = state.snapshot
        snapshotGeneration = snapshot.generation
        snapshotView = Unmanaged.passUnretained(snapshot)
        epoll = try Epoll()
        handle = LoopHandle(epoll: epoll)
        for (position, listener) in listeners.enumerated() {
            try epoll.addShared(listener.fd, token: EventLoop.listenerTokenBase + UInt64(position))
        }
    }

    // MARK: - Running

    func run() {
        while !stopped.load(ordering: .acquiring) {
            clockIsFresh = false
            batchStoredLinks = nil
            refreshSnapshot()
            do {
                try epoll.wait(timeoutMilliseconds: EventLoop.sweepMilliseconds) { event in handle(event) }
            } catch {
                Log.error("event loop \(index): \(error)")
            }
            refreshClock()
            if clock.now - lastSweep >= Int64(EventLoop.sweepMilliseconds) * 1000 {
                lastSweep = clock.now
                sweep()
            }
            if !observedDraining && state.draining.load(ordering: .acquiring) { beginDrain() }
            if observedDraining && mainConnectionCount == 0 { drained.store(true, ordering: .releasing) }
            publishStats()
            accessLog.flush()
        }
        for case let connection? in connections { close(connection) }
        for arrival in waitingForRoom { Posix.abort(arrival.fd) }
        accessLog.flush()
    }

    /// Once per batch of events: the time every state machine of this loop reads.
    private func refreshClock() {
        guard !clockIsFresh else { return }
        clockIsFresh = true
        clock.set(now: Posix.monotonicMicroseconds(), unixSeconds: Int(Posix.unixTime()))
    }

    private func handle(_ event: Epoll.Event) {
        refreshClock()
        if event.token == Epoll.wakeToken {
            retryCertificateWaiters()
            deliverReloadAnswers()
            deliverLinkAPIAnswers()
            evictOnRequest()
            admitWaiting(askForRoom: false)
            return
        }
        if event.token >= EventLoop.listenerTokenBase {
            acceptConnections(listenerAt: Int(event.token - EventLoop.listenerTokenBase))
            return
        }
        let slot = Int(event.token)
        guard slot < connections.count, let connection = connections[slot] else { return }
        connection.machine.socketReady(readable: event.readable, writable: event.writable)
        drive(connection)
    }

    // MARK: - Carrying out actions

    /// Asks the connection's state machine what to do and does it, until it says wait (or the
    /// connection is gone).
    func drive(_ connection: Connection) {
        while true {
            switch connection.machine.nextAction() {
            case .wait:
                return
            case .stepHandshake:
                connection.machine.handshakeStepped(connection.transport.handshake())
                if connection.machine.waitingForCertificate { certificateWaiters.append((connection.slot, connection.serial)) }
            case .read:
                read(connection)
            case .peekProxyHeader:
                let result = Posix.peek(connection.fd, into: readBuffer)
                switch result {
                case .bytes(let count):
                    connection.machine.peeked(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]).assumingMemoryBound(to: UInt8.self))
                case .wouldBlock(let readiness): connection.machine.readBlocked(until: .init(readiness))
                case .closed: connection.machine.readEnded()
                case .failed: connection.machine.failed()
                }
            case .consumeRaw(let count):
                // Already peeked, so all of it is in the socket buffer.
                let result = Posix.read(connection.fd, into: UnsafeMutableRawBufferPointer(rebasing: readBuffer[0..<count]))
                if result == .bytes(count) { connection.machine.consumedRaw() } else { connection.machine.failed() }
            case .answer:
                if !connection.keepsTLSBuffers, case .tls = connection.transport { keepTLSBuffersIfReturning(connection) }
                answer(connection, connection.machine.request)
            case .rejected(let error, let bytes):
                if connection.listener == .main { recordRejected(connection, status: error.status, bytes: bytes) }
            case .timedOut(let kind):
                pendingStats.add { $0.timeouts[kind.rawValue, default: 0] += 1 }
            case .handshakeFailed(let reason):
                // Info, not error: scanners fail handshakes all day; the name and reason are what an operator needs.
                let serverName = connection.transport.serverName
                let client = connection.clientAddress
                let now = Posix.monotonicMilliseconds()
                let line = state.handshakeFailures.withLock { $0.line(serverName: serverName, client: client, reason: reason, now: now) }
                if let line { Log.info(line) }
            case .submitReload:
                state.reloads.submit(ReloadMailbox.Ticket(loop: index, slot: connection.slot, serial: connection.serial))
                state.supervisorWake.signal()
            case .setNoDelay:
                Posix.setNoDelay(connection.fd)
            case .write:
                write(connection)
            case .setInterest(let interest):
                setInterest(connection, interest)
            case .shutdownWrite:
                Posix.shutdownWrite(connection.fd)
            case .close:
                close(connection)
                return
            case .abort(let reason):
                if let reason { Log.error("closing \(connection.clientAddress): \(reason)") }
                abort(connection)
                return
            }
        }
    }

    /// Out of line: only TLS connections come here, and only until they keep their buffers.
    @inline(never)
    private func keepTLSBuffersIfReturning(_ connection: Connection) {
        guard case .tls(let session) = connection.transport, tlsBuffers.startsKeeping(answered: connection.machine.requests)
        else { return }
        session.keepsBuffers = true
        connection.keepsTLSBuffers = true
    }

    private func read(_ connection: Connection) {
        let result = connection.transport.read(connection.fd, into: readBuffer)
        switch result {
        case .bytes(let count):
            connection.machine.received(
                UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]),
                moreBuffered: connection.transport.hasBufferedInput
            )
        case .wouldBlock(let readiness):
            connection.machine.readBlocked(until: .init(readiness))
        case .closed:
            connection.machine.readEnded()
        case .failed:
            connection.machine.failed()
        }
    }

    private func write(_ connection: Connection) {
        let result: IOResult
        switch connection.transport {
        case .plain:
            result = writePlain(connection)
        case .tls(let session):
            // The one answer queued, whole, is encrypted from the loop's kept copy of it. A write that could not
            // finish is retried with exactly the same bytes, as OpenSSL asks: gathered from the queue below (the
            // context accepts a moved buffer; the kept copy may be another answer's by then).
            if connection.tlsRetryLength == nil, let whole = connection.machine.soleOutput(keptIn: renderedAnswer, unlessBodyOf: .max) {
                result = session.write(whole)
                connection.tlsRetryLength = result.isWouldBlock ? whole.count : nil
                break
            }
            // A TLS record holds up to 16 KB; OpenSSL copies what it encrypts, so the pieces are gathered here.
            let length = tlsGather.withUnsafeMutableBytes { raw in
                connection.machine.gatherOutput(
                    into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<(connection.tlsRetryLength ?? 16 * 1024)])
                )
            }
            result = tlsGather.withUnsafeBytes { session.write(UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
            connection.tlsRetryLength = result.isWouldBlock ? length : nil
        }
        switch result {
        case .bytes(let count): connection.machine.wrote(count)
        case .wouldBlock(let readiness): connection.machine.writeBlocked(until: .init(readiness))
        case .closed, .failed: connection.machine.failed()
        }
    }

    /// One write of the queued answers: one answer of 4 KiB or less, whole, from the loop's kept copy of it
    /// (copied there when it is not the one kept); 4 KiB or less of several, everything copied together and sent
    /// with one `send`; otherwise a `writev` of the prepared bytes by pointer, the per-send lines copied into the
    /// loop's line buffer. A body in a sealed memory file (a large document) ends the list: the lines before
    /// it go first, then the kernel sends the body from the file's pages (`sendfile`), which costs less than
    /// copying it in from memory; what follows it goes with the next write.
    private func writePlain(_ connection: Connection) -> IOResult {
        if let whole = connection.machine.soleOutput(keptIn: renderedAnswer, unlessBodyOf: PreparedDocument.minimumSentFromFile) {
            return Posix.write(connection.fd, whole)
        }
        if connection.machine.pendingOutputCount <= Self.copiedWriteLimit,
            let length = connection.machine.copyOutput(into: copiedWrite, unlessBodyOf: PreparedDocument.minimumSentFromFile)
        {
            return Posix.write(connection.fd, UnsafeRawBufferPointer(rebasing: copiedWrite[0..<length]))
        }
        gather.removeAll()
        var linesUsed = 0
        let lines = lineScratch
        var fileBody: (file: SealedMemoryFile, offset: Int, count: Int)?
        connection.machine.forEachOutputPiece { piece, stable, bodyOf in
            // The whole body's size, not what is left of it: the rest of a body a send stopped in goes from
            // the file too, however little is left (only large documents have a file, so small ones skip the
            // cast).
            if let bodyOf,
                let file = bodyOf._withUnsafeGuaranteedRef({
                    $0.bodyBytes.count >= PreparedDocument.minimumSentFromFile ? $0.bodyOwner as? SealedMemoryFile : nil
                }),
                case let offset = piece.baseAddress! - file.buffer.baseAddress!,
                offset >= 0, offset + piece.count <= file.buffer.count
            {
                fileBody = (file, offset, piece.count)
                return false
            }
            if stable {
                gather.append(piece)
            } else {
                guard linesUsed + piece.count <= lines.count else { return false }
                let target = UnsafeMutableRawBufferPointer(rebasing: lines[linesUsed..<(linesUsed + piece.count)])
                target.copyMemory(from: piece)
                gather.append(UnsafeRawBufferPointer(target))
                linesUsed += piece.count
            }
            return !gather.isFull
        }
        guard let fileBody else {
            let copies = gather.count > 1 && gather.byteCount <= Self.copiedWriteLimit
            return copies ? gather.writeCopied(to: connection.fd, through: copiedWrite) : gather.write(to: connection.fd)
        }
        var written = 0
        if gather.count > 0 {
            // Not copied: with the copy the 101 KB cell measured no better (1.05× the build before, as without it).
            let result = gather.write(to: connection.fd, moreFollows: true)
            guard case .bytes(let count) = result else { return result }
            guard count == gather.byteCount else { return result }
            written = count
        }
        // The file lives while the queue holds its response, and the queue is not changed before `wrote`.
        let result = Posix.sendFile(connection.fd, from: fileBody.file.descriptor, offset: fileBody.offset, count: fileBody.count)
        if case .bytes(let count) = result { return .bytes(written + count) }
        return written > 0 ? .bytes(written) : result
    }

    private func setInterest(_ connection: Connection, _ interest: ConnectionStateMachine.Interest) {
        do {
            if connection.registered {
                try epoll.modify(connection.fd, token: UInt64(connection.slot), readable: interest.readable, writable: interest.writable)
            } else {
                try epoll.add(connection.fd, token: UInt64(connection.slot), readable: interest.readable, writable: interest.writable)
                connection.registered = true
            }
        } catch {
            connection.machine.failed()
        }
    }

    /// Takes the server's snapshot when a reload published another one. Never while a request is being
    /// answered: the router holds ``snapshotView``, which does not keep the snapshot alive.
    private func refreshSnapshot() {
        guard state.snapshotGeneration.load(ordering: .acquiring) != snapshotGeneration else { return }
        snapshot = state.snapshot
        snapshotGeneration = snapshot.generation
        snapshotView = Unmanaged.passUnretained(snapshot)
    }

    private func answer(_ connection: Connection, _ head: RequestHead) {
        refreshSnapshot()
        // A server without stored links pays a few nil checks here; one with them, a lock per batch. Taking
        // the watcher, and its table into a local and back into the batch's, retained and released each a request.
        if batchStoredLinks == nil, let watcher = state.storedLinks { batchStoredLinks = watcher.table }
        snapshotView._withUnsafeGuaranteedRef { snapshot in
            guard let storedLinks = batchStoredLinksView else { return answer(connection, head, from: snapshot, storedLinks: nil) }
            storedLinks._withUnsafeGuaranteedRef { answer(connection, head, from: snapshot, storedLinks: $0) }
        }
    }

    /// `snapshot` and `storedLinks` are the loop's own, unchanged until the request is answered.
    private func answer(_ connection: Connection, _ head: RequestHead, from snapshot: Snapshot, storedLinks: ShortLinkTable?) {
        let route = connection.withRequestBytes { buffer in
            switch connection.listener {
            case .main:
                Router.routeMainListener(
                    head,
                    in: buffer,
                    snapshot: snapshot,
                    linkAnswers: linkAnswers,
                    storedLinks: storedLinks,
                    hosts: hostMemo
                )
            case .admin:
                Router.route(head, in: buffer, listener: .admin, snapshot: snapshot, admin: adminView)
            }
        }
        switch route {
        case .reload:
            connection.machine.respondWithReload()
        case .retryCertificate(let host):
            let response: PreparedResponse
            switch state.acme?.retryNow(host) {
            case .queued(let name)?: response = StandardResponses.json(status: 202, "{\"queued\":\"\(name)\"}")
            case .alreadyQueued(let name)?: response = StandardResponses.json(status: 202, "{\"alreadyQueued\":\"\(name)\"}")
            case .refused(let reason)?:
                response = StandardResponses.json(status: 404, JSONWriter.string(.object([("error", .string(reason))])))
            case nil:
                response = StandardResponses.json(status: 404, #"{"error":"this server obtains no certificates (no server.acme)"}"#)
            }
            connection.machine.respond(response)
        case .acmeChallenge(let token):
            // Plain listeners only: the CA validates HTTP-01 over port 80; over TLS the path is like any other.
            let answer = connection.machine.usesTLS ? nil : state.acme?.httpChallengeAnswer(token: token)
            let response = answer.map(StandardResponses.acmeChallenge) ?? StandardResponses.notFound
            let bytes = connection.machine.respond(response)
            record(connection, head, status: response.status, bytes: bytes, site: "-", pathClass: .other)
        case .linkAPI(let call, let token):
            handToLinkWorker(connection, call: call, token: token)
        case .link(let answer, let site):
            // The answer's own response is handed on as the answer holds it: a copy in a variable was a
            // retain and a release a link request.
            let status: Int
            let bytes: Int
            if let claim = answer.claim {
                if case .redeem(let code, let domain, let platform) = claim {
                    handToLinkWorker(connection, call: .claim(code: code, domain: domain, platform: platform), token: .none)
                    return
                }
                let response = claimResponse(claim, key: storedLinks?.claimKey) ?? answer.response
                status = response.status
                bytes = connection.machine.respond(response)
            } else {
                status = answer.response.status
                bytes = connection.machine.respond(answer.response)
            }
            record(connection, head, status: status, bytes: bytes, site: site, pathClass: .link)
            if answer.outcome != "-" {
                pendingStats.countLink(site: site, visitor: answer.visitor, outcome: answer.outcome)
                // AASA_WITHOUT_CLICK_RECORDING builds the counterfactual Benchmarks/request-instructions.py
                // measures recording's share of a click against (--without-click-recording); never shipped.
                #if !AASA_WITHOUT_CLICK_RECORDING
                if let stored = answer.stored {
                    pendingStats.countClick(LoopStats.ClickKey(link: stored, kind: answer.clickKind, head: head.method == .head))
                }
                #endif
            }
        case .respond(let response, let site, let pathClass):
            let bytes = connection.machine.respond(response)
            // The request's bytes stay in the input until the next action, so they can be logged now.
            if connection.listener == .main {
                record(connection, head, status: response.status, bytes: bytes, site: site, pathClass: pathClass)
            }
        }
    }

    private func adminView() -> AdminView {
        AdminView(
            isDraining: state.draining.load(ordering: .relaxed),
            lastReloadFailed: state.lastReloadFailed.load(ordering: .relaxed),
            metrics: { [registry, state] in MetricsRenderer.render(registry.merged(), state: state) },
            status: { [state] host in StatusRenderer.json(host: host, log: state.fetchLog, snapshot: state.snapshot) },
            console: { [state] path, query throws(ConsoleRenderer.Failure) in
                do throws(ConsoleRenderer.Failure) {
                    return try ConsoleRenderer.answer(
                        path: path,
                        query: query,
                        log: state.fetchLog,
                        snapshot: state.snapshot,
                        now: Int(Posix.unixTime() * 1000),
                        shortLinks: state.linkAPI != nil
                    )
                } catch {
                    Log.warning("console: answered 500 for \(path): \(error.reason)")
                    throw error
                }
            }
        )
    }

    /// A certificate became ready (or will not come): every suspended handshake steps again; those still
    /// waiting join the list again.
    private func retryCertificateWaiters() {
        guard !certificateWaiters.isEmpty else { return }
        let waiters = certificateWaiters
        certificateWaiters = []
        for (slot, serial) in waiters {
            guard slot < connections.count, let connection = connections[slot], connection.serial == serial,
                connection.machine.waitingForCertificate, connection.machine.unpark()
            else { continue }
            drive(connection)
        }
    }

    /// Writes the answers of finished `POST /reload` requests held by this loop.
    private func deliverReloadAnswers() {
        // Requests pipelined after POST /reload are answered from the config it put in force (``answer``
        // takes the published snapshot).
        batchStoredLinks = nil
        for (ticket, outcome) in state.reloads.takeAnswers(forLoop: index) {
            guard ticket.slot < connections.count, let connection = connections[ticket.slot], connection.serial == ticket.serial,
                case .awaitingAnswer = connection.machine.phase
            else { continue }
            connection.machine.respond(AdminResponses.reload(outcome))
            drive(connection)
        }
    }

    /// Writes the answers of finished link API calls held by this loop.
    private func deliverLinkAPIAnswers() {
        guard let worker = state.linkAPI else { return }
        for (ticket, response) in worker.takeAnswers(forLoop: index) {
            guard ticket.slot < connections.count, let connection = connections[ticket.slot], connection.serial == ticket.serial,
                case .awaitingAnswer = connection.machine.phase
            else { continue }
            connection.machine.respond(response)
            drive(connection)
        }
    }

    // MARK: - Timers and drain

    private func sweep() {
        // What the kept answer holds alive (a document's file, an old snapshot's storage) goes within a sweep.
        renderedAnswer.forget()
        // Ticks step the waiting handshakes too: forget the list, the steps list those still waiting.
        certificateWaiters = []
        for case let connection? in connections {
            if connection.keepsTLSBuffers, tlsBuffers.stopsKeeping(idleSince: connection.machine.idleSince, now: clock.now),
                case .tls(let session) = connection.transport
            {
                session.keepsBuffers = false
                connection.keepsTLSBuffers = false
            }
            if connection.machine.tick() { drive(connection) }
        }
        publishOldestCandidate()
        admitWaiting(askForRoom: true)
    }

    private func beginDrain() {
        observedDraining = true
        // Stop accepting on the main listeners (the admin listener stays, for /readyz). The sockets are
        // shared by all loops, so the supervisor closes them once every loop has let go.
        for position in listeners.indices where listeners[position].role == .main && listeners[position].fd >= 0 {
            epoll.remove(listeners[position].fd)
            listeners[position].fd = -1
        }
        releasedListeners.store(true, ordering: .releasing)
        for arrival in waitingForRoom { Posix.abort(arrival.fd) }
        waitingForRoom = []
        for case let connection? in connections where connection.listener == .main {
            connection.machine.beginDrain()
            drive(connection)
        }
    }

    // MARK: - Closing

    private func release(_ connection: Connection) {
        // No EPOLL_CTL_DEL: closing the only descriptor of a socket removes it from every epoll set.
        connections[connection.slot] = nil
        freeSlots.append(connection.slot)
        if connection.keepsTLSBuffers {
            tlsBuffers.keeperClosed()
            connection.keepsTLSBuffers = false
        }
        if connection.listener == .main {
            mainConnectionCount -= 1
            state.connections.release()
        }
    }

    /// Takes over an accepted connection (a main one already holds its place under the cap).
    func adopt(_ connection: Connection) {
        connections[connection.slot] = connection
        if connection.listener == .main { mainConnectionCount += 1 }
    }

    func close(_ connection: Connection) {
        guard connections[connection.slot] === connection else { return }
        release(connection)
        connection.transport.close(connection.fd)
    }

    func abort(_ connection: Connection) {
        guard connections[connection.slot] === connection else { return }
        release(connection)
        Posix.abort(connection.fd)
    }
}
