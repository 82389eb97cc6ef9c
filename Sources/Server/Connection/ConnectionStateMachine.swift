import HTTP1

/// One connection's protocol state — TLS handshake, PROXY header, request heads, bodies, responses,
/// keep-alive, timeouts, drain — as a value with no I/O.
///
/// The event loop reports what happened (bytes read, a write's progress, socket readiness, a timer
/// tick) and then asks ``nextAction()`` what to do, carrying out each action and reporting its result,
/// until the answer is ``Action/wait``. Every decision about the connection is made here, so all of
/// them are tested without a socket (`ConnectionStateMachineTests`).
struct ConnectionStateMachine {
    enum Action: Equatable {
        /// Step the TLS handshake; report with ``handshakeStepped(_:)``.
        case stepHandshake
        /// TLS listener with the PROXY protocol: copy what is waiting without consuming it (OpenSSL must
        /// not see the header); report with ``peeked(_:)``.
        case peekProxyHeader
        /// Read and drop exactly this many bytes (the PROXY header just peeked); report with ``consumedRaw()``.
        case consumeRaw(Int)
        /// Read once; report with ``received(_:moreBuffered:)``, ``readBlocked(until:)``, ``readEnded()``
        /// or ``failed(_:)``.
        case read
        /// A complete request, ``request`` (body, if any, read and judged): route it, then call
        /// ``respond(_:)`` or ``respondWithReload()``. Its ranges index ``input``.
        case answer
        /// An error answer was queued (count it); nothing to carry out.
        case rejected(HTTPError, bytes: Int)
        /// A timeout fired (count it); the actions that follow carry it out.
        case timedOut(TimeoutKind)
        /// The TLS handshake failed for this reason (log it); an abort follows.
        case handshakeFailed(String)
        /// Hand the reload to the supervisor; its answer comes back through ``respond(_:)``.
        case submitReload
        /// Turn off Nagle's algorithm: the connection is kept alive for more requests.
        case setNoDelay
        /// Write pending output once; report with ``wrote(_:)``, ``writeBlocked(until:)`` or ``failed(_:)``.
        case write
        /// Register or change what the socket is watched for.
        case setInterest(Interest)
        /// Everything is answered but the client is still sending: shut our side, keep reading until it closes.
        case shutdownWrite
        /// Close gracefully (TLS: close_notify first).
        case close
        /// Close at once with a reset; `reason` is logged when present.
        case abort(reason: String?)
        /// Nothing to do until the next event.
        case wait
    }

    struct Interest: Equatable {
        var readable: Bool
        var writable: Bool
    }

    enum TimeoutKind: String, Equatable, Sendable {
        case header, body, keepalive, write
    }

    /// What a TLS handshake step did (the transport's answer, without its types).
    enum HandshakeStep: Equatable {
        case done
        case wouldBlock(Readiness)
        case failed(String)
        case closed
    }

    enum Readiness: Equatable {
        case readable, writable
    }

    enum Phase {
        case proxyHeader
        case handshake
        /// Waiting for, or parsing, a request head.
        case head
        /// Reading the body of ``request`` before answering it: the head's bytes stay at the start of the
        /// input (its ranges stay valid), the body's bytes are dropped as they are judged.
        case body(BodyDiscarder)
        /// ``Action/answer`` was handed out for ``request``; its head is the first `request.length` bytes
        /// of the input.
        case answering
        case awaitingReload
        /// Answered and write side shut: reading (and dropping) until the client closes or the linger ends.
        case lingering
        case closed
    }

    let settings: ConnectionSettings
    let clock: LoopClock
    let usesTLS: Bool
    private(set) var phase: Phase
    private(set) var input: [UInt8] = []
    /// Answers waiting to be written, by reference to their prepared bytes.
    private(set) var output = OutputQueue()
    private var parser: RequestHeadParser
    /// The request being read (its body), answered, or waiting for a reload. Kept out of ``Phase`` so
    /// that looking at the phase copies nothing.
    private(set) var request = RequestHead()
    private(set) var requests = 0
    /// The client address a PROXY header gave (nil: the socket's peer, or a LOCAL/UNKNOWN header).
    private(set) var proxiedClient: String?

    private var closeAfterWrite = false
    private(set) var peerClosed = false
    private(set) var draining = false
    /// The connection cannot go on: the next action aborts it (with the reason, if there is one to log).
    private var mustAbort = false
    private var abortReason: String?
    /// The connection is done without error: the next action closes it.
    private var mustClose = false

    /// A read may make progress now (optimistic at first: the first request is usually already here).
    private var readReady = true
    private var readWaitsFor = Readiness.readable
    private var writeBlocked = false
    private var writeWaitsFor = Readiness.writable
    /// TLS + PROXY: a partial header was peeked; retried on the next timer tick instead of on readiness
    /// (a peeked socket stays readable, so waiting for readiness would spin).
    private var peekParked = false
    /// Nil until first registered with epoll.
    private var registered: Interest?
    private var noDelayPending = false
    private var noDelaySet = false
    private var reloadToSubmit = false
    private var pendingConsume = 0
    private var notices: [Action] = []

    /// Clocks, in the loop clock's microseconds.
    private var headerStartedAt: Int64
    private var bodyStartedAt: Int64 = 0
    private(set) var idleSince: Int64?
    private var writeStalledSince: Int64?
    private var lingerStartedAt: Int64 = 0
    /// When the first byte of the current request arrived (access-log durations).
    private(set) var requestStartedAt: Int64?

    init(settings: ConnectionSettings, clock: LoopClock, usesTLS: Bool, proxyProtocol: Bool) {
        self.settings = settings
        self.clock = clock
        self.usesTLS = usesTLS
        parser = RequestHeadParser(limits: settings.limits)
        phase = proxyProtocol ? .proxyHeader : usesTLS ? .handshake : .head
        headerStartedAt = clock.now
    }

    // MARK: - Events

    /// The socket has `readable`/`writable` readiness (an epoll event).
    mutating func socketReady(readable: Bool, writable: Bool) {
        if (readable && readWaitsFor == .readable) || (writable && readWaitsFor == .writable) { readReady = true }
        if (writable && writeWaitsFor == .writable) || (readable && writeWaitsFor == .readable) { writeBlocked = false }
    }

    mutating func handshakeStepped(_ step: HandshakeStep) {
        switch step {
        case .done:
            phase = .head
            readReady = true
            readWaitsFor = .readable
        case .wouldBlock(let readiness):
            readReady = false
            readWaitsFor = readiness
        case .failed(let reason):
            // Plain HTTP on a TLS port, an unsupported protocol version, an unknown SNI name: nothing the
            // client can be told over a connection that never became TLS, but the operator is.
            notices.append(.handshakeFailed(reason))
            abort()
        case .closed:
            abort()
        }
    }

    /// Bytes a read returned. `moreBuffered`: the transport holds more already (TLS), so read again.
    mutating func received(_ bytes: UnsafeRawBufferPointer, moreBuffered: Bool = false) {
        readReady = moreBuffered
        readWaitsFor = .readable
        if case .lingering = phase { return }
        if input.isEmpty {
            if idleSince != nil {
                // The first byte of a new request starts its header clock (not reset by later bytes).
                idleSince = nil
                headerStartedAt = clock.now
            }
            if requestStartedAt == nil { requestStartedAt = clock.now }
        }
        input.append(contentsOf: bytes)
    }

    mutating func readBlocked(until readiness: Readiness) {
        readReady = false
        readWaitsFor = readiness
    }

    /// The peer closed its side (it may still read our answers).
    mutating func readEnded() {
        readReady = false
        peerClosed = true
    }

    /// A read or write failed (reset, TLS error): nothing more can be sent.
    mutating func failed() {
        abort()
    }

    private mutating func abort(_ reason: String? = nil) {
        mustAbort = true
        abortReason = reason
    }

    /// What is waiting on a TLS + PROXY socket, copied without consuming it.
    mutating func peeked(_ bytes: UnsafeBufferPointer<UInt8>) {
        switch ProxyProtocol.parse(bytes) {
        case .incomplete:
            readReady = false
            peekParked = true
        case .failed(let reason):
            abort("PROXY header: \(reason)")
        case .complete(let client, let length):
            proxiedClient = client
            pendingRawConsume = length
        }
    }

    private var pendingRawConsume: Int?

    /// The PROXY header was read off the socket; TLS starts.
    mutating func consumedRaw() {
        pendingRawConsume = nil
        phase = .handshake
        readReady = true
    }

    mutating func wrote(_ count: Int) {
        output.consume(count)
        writeStalledSince = nil
    }

    mutating func writeBlocked(until readiness: Readiness) {
        writeBlocked = true
        writeWaitsFor = readiness
        if writeStalledSince == nil { writeStalledSince = clock.now }
    }

    /// Answers the request handed out by ``Action/answer(_:)`` (or a finished reload). Returns the
    /// bytes queued.
    @discardableResult
    mutating func respond(_ response: PreparedResponse) -> Int {
        switch phase {
        case .answering, .awaitingReload: break
        default: preconditionFailure("respond(_:) without a request being answered")
        }
        let head = request
        requests += 1
        let close = !head.keepAlive || requests >= settings.maxRequests || draining || peerClosed
        let directive: ConnectionDirective = close ? .close : head.isHTTP10 ? .keepAlive : .none
        let bytes = output.append(response, dateLine: clock.dateLine, connection: directive, includeBody: head.method != .head)
        if close {
            closeAfterWrite = true
        } else if !noDelaySet {
            noDelaySet = true
            noDelayPending = true
        }
        pendingConsume = head.length
        phase = .head
        return bytes
    }

    /// The request handed out is `POST /reload`: the answer comes once the supervisor has reloaded.
    mutating func respondWithReload() {
        guard case .answering = phase else { preconditionFailure("respondWithReload() without a request being answered") }
        phase = .awaitingReload
        reloadToSubmit = true
    }

    mutating func beginDrain() { draining = true }

    /// Checks the deadlines against the clock; call on every timer tick. True when something changed
    /// (then ask ``nextAction()``).
    mutating func tick() -> Bool {
        var changed = false
        if peekParked {
            peekParked = false
            readReady = true
            changed = true
        }
        guard let (deadline, kind) = currentDeadline(), clock.now >= deadline else { return changed }
        switch kind {
        case .linger:
            mustClose = true
        case .timeout(.keepalive):
            notices.append(.timedOut(.keepalive))
            mustClose = true
        case .timeout(.write):
            notices.append(.timedOut(.write))
            abort()
        case .timeout(.header):
            notices.append(.timedOut(.header))
            if case .head = phase, !input.isEmpty {
                // Tell a slow (or slowloris) client why before closing.
                notices.append(reject(.requestTimeout))
            } else {
                // Nothing of a request arrived (or the handshake never finished): nobody to tell.
                abort()
            }
        case .timeout(.body):
            notices.append(.timedOut(.body))
            notices.append(reject(.bodyTimeout))
        }
        return true
    }

    /// At the connection cap, this one is closed to make room.
    mutating func evict() { abort() }

    // MARK: - Queries

    var hasPendingOutput: Bool { !output.isEmpty }

    var pendingOutputCount: Int { output.byteCount }

    /// How eviction sees this connection: idle ones go first, then those still sending a request (header
    /// or body) — oldest first in each group. Nil for connections being answered, which are never evicted.
    var evictionRank: (group: Int, since: Int64)? {
        guard !hasPendingOutput, !closeAfterWrite else { return nil }
        switch phase {
        case .head:
            if let idleSince, input.isEmpty, requests > 0 { return (0, idleSince) }
            return (1, headerStartedAt)
        case .proxyHeader, .handshake: return (1, headerStartedAt)
        case .body: return (1, bodyStartedAt)
        case .answering, .awaitingReload, .lingering, .closed: return nil
        }
    }

    private enum DeadlineKind: Equatable {
        case timeout(TimeoutKind)
        case linger
    }

    private func currentDeadline() -> (Int64, DeadlineKind)? {
        if case .lingering = phase { return (lingerStartedAt + settings.lingerTimeout, .linger) }
        if hasPendingOutput {
            return writeStalledSince.map { ($0 + settings.writeTimeout, .timeout(.write)) }
        }
        if closeAfterWrite { return nil }
        switch phase {
        case .answering, .awaitingReload, .closed, .lingering:
            return nil
        case .body:
            return (bodyStartedAt + settings.bodyTimeout, .timeout(.body))
        case .head where input.isEmpty && idleSince != nil:
            return (idleSince! + settings.keepAliveTimeout, .timeout(.keepalive))
        case .head, .proxyHeader, .handshake:
            return (headerStartedAt + settings.headerTimeout, .timeout(.header))
        }
    }

    // MARK: - Deciding

    /// What to do now. Call after every event and after carrying out every action, until ``Action/wait``.
    mutating func nextAction() -> Action {
        if case .closed = phase { return .wait }
        if !notices.isEmpty { return notices.removeFirst() }
        if mustAbort {
            phase = .closed
            return .abort(reason: abortReason)
        }
        if mustClose {
            phase = .closed
            return .close
        }
        if pendingConsume > 0 { consumeAnsweredRequest() }
        if reloadToSubmit {
            reloadToSubmit = false
            return .submitReload
        }
        if let action = processInput() { return action }
        if let length = pendingRawConsume { return .consumeRaw(length) }
        if noDelayPending {
            noDelayPending = false
            return .setNoDelay
        }
        if hasPendingOutput && !writeBlocked { return .write }
        if !hasPendingOutput {
            if closeAfterWrite {
                if case .lingering = phase {
                } else if input.isEmpty || peerClosed {
                    phase = .closed
                    return .close
                } else {
                    // Unread request bytes would turn our answer into a reset: linger until the client closes.
                    phase = .lingering
                    input = []
                    lingerStartedAt = clock.now
                    readReady = true
                    return .shutdownWrite
                }
            }
            switch phase {
            case .awaitingReload, .answering:
                break
            case .lingering:
                if peerClosed {
                    phase = .closed
                    return .close
                }
            default:
                // A half-closed client is answered; once everything it asked for is written, we close.
                if peerClosed || (draining && isWaitingForRequest) {
                    phase = .closed
                    return .close
                }
            }
        }
        if readReady && wantsToRead {
            switch phase {
            case .handshake: return .stepHandshake
            case .proxyHeader where usesTLS: return .peekProxyHeader
            default: return .read
            }
        }
        let wanted = Interest(
            readable: (wantsToRead && readWaitsFor == .readable) || (hasPendingOutput && writeWaitsFor == .readable),
            writable: (wantsToRead && readWaitsFor == .writable) || (hasPendingOutput && writeWaitsFor == .writable)
        )
        if wanted != registered {
            registered = wanted
            return .setInterest(wanted)
        }
        return .wait
    }

    /// Between requests with nothing buffered: what a drain closes at once.
    private var isWaitingForRequest: Bool {
        guard case .head = phase else { return false }
        return input.isEmpty
    }

    private var wantsToRead: Bool {
        if peerClosed || peekParked || pendingRawConsume != nil { return false }
        switch phase {
        case .closed, .answering, .awaitingReload: return false
        case .lingering: return true
        default:
            // Backpressure: a client that pipelines requests but does not read the answers is not read
            // from either, so neither its input nor its output can grow without bound.
            return !closeAfterWrite && pendingOutputCount < settings.outputHighWater
        }
    }

    private mutating func consumeAnsweredRequest() {
        input.removeFirst(pendingConsume)
        pendingConsume = 0
        if input.isEmpty {
            requestStartedAt = nil
            if !closeAfterWrite { idleSince = clock.now }
            // An idle connection keeps no read buffer (10,000 idle connections must stay small).
            input = []
        } else {
            // The next pipelined request is already here: its clocks start now.
            headerStartedAt = clock.now
            requestStartedAt = clock.now
        }
    }

    /// Parses what the input holds, as far as the phase and the output allow.
    private mutating func processInput() -> Action? {
        while !closeAfterWrite && pendingOutputCount < settings.outputHighWater {
            switch phase {
            case .proxyHeader where !usesTLS:
                guard !input.isEmpty else { return nil }
                switch input.withUnsafeBufferPointer({ ProxyProtocol.parse($0) }) {
                case .incomplete:
                    return nil
                case .failed(let reason):
                    phase = .closed
                    return .abort(reason: "PROXY header: \(reason)")
                case .complete(let client, let length):
                    proxiedClient = client
                    input.removeFirst(length)
                    phase = .head
                }
            case .head:
                guard !input.isEmpty else { return nil }
                var parser = self.parser
                let result = input.withUnsafeBufferPointer { parser.parse($0) }
                self.parser = parser
                switch result {
                case .incomplete:
                    return nil
                case .failed(let error):
                    return reject(error)
                case .complete(let head):
                    self.parser.reset()
                    request = head
                    switch head.body {
                    case .none:
                        phase = .answering
                        return .answer
                    case .length(let length) where length > settings.limits.bodyBytes:
                        // Refused before any of it is read.
                        return reject(.payloadTooLarge)
                    case .length, .chunked:
                        startBody(of: head)
                    }
                }
            case .body(var discarder):
                let bodyStart = request.length
                let result = input.withUnsafeBufferPointer { discarder.consume($0, from: bodyStart) }
                switch result {
                case .needMore:
                    input.removeSubrange(bodyStart...)
                    phase = .body(discarder)
                    return nil
                case .done(let end):
                    input.removeSubrange(bodyStart..<end)
                    phase = .answering
                    return .answer
                case .failed(let error):
                    // The whole message is judged before its answer: bad framing is the answer.
                    return reject(error)
                }
            default:
                return nil
            }
        }
        return nil
    }

    /// A request with a body: its body phase starts. Kept out of line: bodies are rare here, and the loop
    /// that parses every request stays small.
    @inline(never)
    private mutating func startBody(of head: RequestHead) {
        // A client that sent Expect: 100-continue waits for this before sending the body; an HTTP/1.0
        // client does not know the interim answer, and one already sending needs none.
        if head.expectsContinue && !head.isHTTP10 && input.count == head.length {
            output.append(PreparedResponse.continueInterim, dateLine: [], connection: .none, includeBody: false)
        }
        phase = .body(BodyDiscarder(head.body, limit: settings.limits.bodyBytes))
        bodyStartedAt = clock.now
    }

    /// Queues the answer to a request that cannot be served, and closes after it: the framing of
    /// whatever follows is in doubt (RFC 9112 §2.2).
    private mutating func reject(_ error: HTTPError) -> Action {
        let bytes = output.append(ErrorResponses.response(for: error), dateLine: clock.dateLine, connection: .close, includeBody: true)
        requests += 1
        closeAfterWrite = true
        phase = .head
        return .rejected(error, bytes: bytes)
    }
}
