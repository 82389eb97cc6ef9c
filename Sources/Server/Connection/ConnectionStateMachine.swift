import HTTP1

/// One connection's protocol state — TLS handshake, PROXY header, request heads, bodies, responses,
/// keep-alive, timeouts, drain — as a value with no I/O.
///
/// The event loop reports what happened (bytes read, a write's progress, socket readiness, a timer
/// tick) and then asks ``nextAction()`` what to do, carrying out each action and reporting its result,
/// until the answer is ``Action/wait``. Every decision about the connection is made here, so all of
/// them are tested without a socket (`ConnectionStateMachineTests`).
struct ConnectionStateMachine {
    let settings: ConnectionSettings
    let clock: LoopClock
    let usesTLS: Bool
    private(set) var phase: Phase
    /// Request bytes not yet consumed, parsed where they were read (``received(_:moreBuffered:)``).
    private(set) var input = RequestInput()
    /// Answers waiting to be written, by reference to their prepared bytes.
    private(set) var output = OutputQueue()
    private var parser: RequestHeadParser
    /// The request being read (its body), answered, or waiting for a reload. Kept out of ``Phase`` so
    /// that looking at the phase copies nothing.
    private(set) var request = RequestHead()
    private(set) var requests = 0
    /// The client address a PROXY header gave (nil: the socket's peer, or a LOCAL/UNKNOWN header).
    private(set) var proxiedClient: String?

    private(set) var closeAfterWrite = false
    private(set) var peerClosed = false
    private(set) var draining = false
    /// The connection cannot go on: the next action aborts it (with the reason, if there is one to log).
    private var mustAbort = false
    private var abortReason: String?
    /// The connection is done without error: the next action closes it.
    private var mustClose = false

    private var socket = SocketInterest()
    /// Retried on the next timer tick (or ``unpark()``) instead of on readiness: a partial PROXY header
    /// peeked (TLS + PROXY: a peeked socket stays readable, so waiting for readiness would spin), or a
    /// handshake waiting for its certificate (no socket event will say when it is ready).
    private var parked = false
    /// The parked step is a handshake waiting for its certificate.
    private(set) var waitingForCertificate = false
    private var noDelayPending = false
    private var noDelaySet = false
    private var reloadToSubmit = false
    /// Admin connections keep a request's body (the link API reads it); the main listener's are dropped as
    /// they are judged. Only a Content-Length body is kept: chunked ones are dropped everywhere.
    let keepsBodies: Bool
    private var keepingBody = false
    /// How much of the kept body the framing has judged (it is scanned once, as a dropped one is).
    private var keptScanned = 0
    private var keptLength = 0
    private var pendingConsume = 0
    private var notices: [Action] = []

    private(set) var clocks: Clocks
    var idleSince: Int64? { clocks.idleSince }
    /// When the first byte of the current request arrived (access-log durations).
    var requestStartedAt: Int64? { clocks.requestStartedAt }

    init(settings: ConnectionSettings, clock: LoopClock, usesTLS: Bool, proxyProtocol: Bool, keepsBodies: Bool = false) {
        self.settings = settings
        self.clock = clock
        self.usesTLS = usesTLS
        self.keepsBodies = keepsBodies
        parser = RequestHeadParser(limits: settings.limits)
        phase = proxyProtocol ? .proxyHeader : usesTLS ? .handshake : .head
        clocks = Clocks(headerStartedAt: clock.now)
    }

    // MARK: - Events

    /// The socket has `readable`/`writable` readiness (an epoll event).
    mutating func socketReady(readable: Bool, writable: Bool) {
        socket.ready(readable: readable, writable: writable)
    }

    mutating func handshakeStepped(_ step: HandshakeStep) {
        if step != .waitingForCertificate { waitingForCertificate = false }
        switch step {
        case .done:
            phase = .head
            socket.readReadyAgain()
        case .wouldBlock(let readiness):
            socket.readBlocked(until: readiness)
        case .waitingForCertificate:
            socket.readReady = false
            parked = true
            waitingForCertificate = true
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
    ///
    /// Request heads are parsed and answered where the bytes are: the caller changes them only once the
    /// machine next asks to read, peek, consume raw bytes or step a handshake, says to wait, or ends the
    /// connection (by then it has copied what it still needs).
    mutating func received(_ bytes: UnsafeRawBufferPointer, moreBuffered: Bool = false) {
        socket.read(moreBuffered: moreBuffered)
        if case .lingering = phase { return }
        if input.isEmpty { clocks.requestBytesArrived(at: clock.now) }
        input.receive(bytes, inPlace: { if case .head = phase { true } else { false } }())
    }

    mutating func readBlocked(until readiness: Readiness) { socket.readBlocked(until: readiness) }

    /// The peer closed its side (it may still read our answers).
    mutating func readEnded() {
        socket.readReady = false
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
            socket.readReady = false
            parked = true
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
        socket.readReady = true
    }

    mutating func wrote(_ count: Int) {
        output.consume(count)
        clocks.writeStalledSince = nil
    }

    mutating func writeBlocked(until readiness: Readiness) {
        socket.writeBlocked(until: readiness)
        if clocks.writeStalledSince == nil { clocks.writeStalledSince = clock.now }
    }

    /// Answers the request handed out by ``Action/answer(_:)`` (or a finished reload). Returns the
    /// bytes queued.
    @discardableResult
    mutating func respond(_ response: PreparedResponse) -> Int {
        switch phase {
        case .answering, .awaitingAnswer: break
        default: preconditionFailure("respond(_:) without a request being answered")
        }
        requests += 1
        let close = !request.keepAlive || requests >= settings.maxRequests || draining || peerClosed
        let directive: ConnectionDirective = close ? .close : request.isHTTP10 ? .keepAlive : .none
        let bytes = output.append(response, date: clock.dateLine, connection: directive, includeBody: request.method != .head)
        if close {
            closeAfterWrite = true
        } else if !noDelaySet {
            noDelaySet = true
            noDelayPending = true
        }
        pendingConsume = request.length + keptLength
        keepingBody = false
        keptLength = 0
        phase = .head
        return bytes
    }

    /// ``OutputQueue/forEachPiece(_:)`` on the queue where it is (reading it out of the connection would
    /// copy it).
    mutating func forEachOutputPiece(
        _ body: (UnsafeRawBufferPointer, _ stable: Bool, _ bodyOf: Unmanaged<PreparedResponse>?) -> Bool
    ) { output.forEachPiece(body) }

    /// ``OutputQueue/gather(into:)`` on the queue where it is.
    mutating func gatherOutput(into buffer: UnsafeMutableRawBufferPointer) -> Int { output.gather(into: buffer) }

    /// ``OutputQueue/copyAll(into:unlessBodyOf:)`` on the queue where it is.
    mutating func copyOutput(into buffer: UnsafeMutableRawBufferPointer, unlessBodyOf largeBodies: Int) -> Int? {
        output.copyAll(into: buffer, unlessBodyOf: largeBodies)
    }

    /// ``OutputQueue/soleAnswer(keptIn:unlessBodyOf:)`` on the queue where it is.
    mutating func soleOutput(keptIn memo: RenderedAnswer, unlessBodyOf largeBodies: Int) -> UnsafeRawBufferPointer? {
        output.soleAnswer(keptIn: memo, unlessBodyOf: largeBodies)
    }

    /// Where the body of the request being answered sits in ``input``: nil when it had none or it was
    /// dropped (the main listener, or chunked).
    var keptBody: Range<Int>? {
        guard case .answering = phase, keptLength > 0 else { return nil }
        return request.length..<(request.length + keptLength)
    }

    /// The request handed out is `POST /reload`: the answer comes once the supervisor has reloaded.
    mutating func respondWithReload() {
        guard case .answering = phase else { preconditionFailure("respondWithReload() without a request being answered") }
        phase = .awaitingAnswer
        reloadToSubmit = true
    }

    /// The answer to the request handed out comes later, from another thread (``respond(_:)`` then).
    mutating func respondLater() {
        guard case .answering = phase else { preconditionFailure("respondLater() without a request being answered") }
        phase = .awaitingAnswer
    }

    mutating func beginDrain() { draining = true }

    /// Makes a parked step due again (on a tick, or when a certificate it waits for may be ready). True
    /// when one was parked (then ask ``nextAction()``).
    @discardableResult
    mutating func unpark() -> Bool {
        guard parked else { return false }
        parked = false
        socket.readReady = true
        return true
    }

    /// Checks the deadlines against the clock; call on every timer tick. True when something changed
    /// (then ask ``nextAction()``).
    mutating func tick() -> Bool {
        let changed = unpark()
        let expired = currentDeadline.flatMap { clock.now >= $0.at ? $0.kind : nil }
        switch expired {
        case nil:
            return changed
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

    // MARK: - Deciding

    /// What to do now. Call after every event and after carrying out every action, until ``Action/wait``.
    // Inlined into the loop's `drive`, its one caller: the action is decided and switched on in one place, without
    // building the enum and a call per action (170 instructions a keep-alive request).
    @inline(__always) mutating func nextAction() -> Action {
        if case .closed = phase { return .wait }
        if !notices.isEmpty { return notices.removeFirst() }
        if mustAbort {
            phase = .closed
            input.removeAll()
            return .abort(reason: abortReason)
        }
        if mustClose {
            phase = .closed
            input.removeAll()
            return .close
        }
        if pendingConsume > 0 { consumeAnsweredRequest() }
        if reloadToSubmit {
            reloadToSubmit = false
            return .submitReload
        }
        // Empty input has nothing to parse in any phase (a body phase still holds its head), and most calls
        // come with none: the read before a request, the write and the wait after it.
        if !input.isEmpty, let action = processInput() { return action }
        if let length = pendingRawConsume {
            input.settle()
            return .consumeRaw(length)
        }
        if noDelayPending {
            noDelayPending = false
            return .setNoDelay
        }
        if hasPendingOutput {
            if !socket.writeBlocked { return .write }
        } else if closeAfterWrite || peerClosed || draining, let ending = endingAction() {
            return ending
        }
        if socket.readReady && wantsToRead {
            // The loop reads into the buffer the input may still be in.
            input.settle()
            switch phase {
            case .handshake: return .stepHandshake
            case .proxyHeader where usesTLS: return .peekProxyHeader
            default: return .read
            }
        }
        if let changed = socket.register(reading: wantsToRead, writing: hasPendingOutput) { return .setInterest(changed) }
        // The loop goes on to other connections, which read into the same buffer.
        input.settle()
        return .wait
    }

    /// With everything written: whether the connection ends now, by phase. Never without `closeAfterWrite`,
    /// `peerClosed` or `draining` (``nextAction()`` asks only then).
    private mutating func endingAction() -> Action? {
        switch phase {
        case .awaitingAnswer, .answering, .closed:
            return nil
        case .lingering:
            guard peerClosed else { return nil }
        case .head, .proxyHeader, .handshake, .body:
            if closeAfterWrite && !input.isEmpty && !peerClosed {
                // Unread request bytes would turn our answer into a reset: linger until the client closes.
                phase = .lingering
                input.removeAll()
                clocks.lingerStartedAt = clock.now
                socket.readReady = true
                return .shutdownWrite
            }
            // A half-closed client is answered; once everything it asked for is written, we close.
            // A drain closes a connection between requests with nothing buffered at once.
            let waitingForRequest = input.isEmpty && { if case .head = phase { true } else { false } }()
            guard closeAfterWrite || peerClosed || (draining && waitingForRequest) else { return nil }
        }
        phase = .closed
        input.removeAll()
        return .close
    }

    private var wantsToRead: Bool {
        if peerClosed || parked || pendingRawConsume != nil { return false }
        switch phase {
        case .closed, .answering, .awaitingAnswer: return false
        case .lingering: return true
        default:
            // Backpressure: a client that pipelines requests but does not read the answers is not read
            // from either, so neither its input nor its output can grow without bound.
            return !closeAfterWrite && pendingOutputCount < settings.outputHighWater
        }
    }

    private mutating func consumeAnsweredRequest() {
        input.consume(pendingConsume)
        pendingConsume = 0
        if input.isEmpty {
            clocks.requestAnswered(at: clock.now, idle: !closeAfterWrite)
        } else {
            clocks.pipelinedRequestStarts(at: clock.now)
        }
    }

    /// Parses what the input holds, as far as the phase and the output allow.
    private mutating func processInput() -> Action? {
        while !closeAfterWrite && pendingOutputCount < settings.outputHighWater {
            switch phase {
            case .proxyHeader where !usesTLS:
                guard !input.isEmpty else { return nil }
                switch input.withBytes({ ProxyProtocol.parse($0) }) {
                case .incomplete:
                    return nil
                case .failed(let reason):
                    phase = .closed
                    return .abort(reason: "PROXY header: \(reason)")
                case .complete(let client, let length):
                    proxiedClient = client
                    input.consume(length)
                    phase = .head
                }
            case .head:
                guard !input.isEmpty else { return nil }
                let status: HeadParseStatus
                if let bytes = input.inPlace {
                    // Parsed straight into the request: no head is copied.
                    status = parser.parse(bytes, into: &request)
                } else {
                    var parser = self.parser
                    var head = RequestHead()
                    status = input.withBytes { parser.parse($0, into: &head) }
                    self.parser = parser
                    request = head
                }
                switch status {
                case .incomplete:
                    return nil
                case .failed(let error):
                    return reject(error)
                case .complete:
                    parser.reset()
                    switch request.body {
                    case .none:
                        phase = .answering
                        return .answer
                    case .length(let length) where length > settings.limits.bodyBytes:
                        // Refused before any of it is read.
                        return reject(.payloadTooLarge)
                    case .length, .chunked:
                        startBody()
                    }
                }
            case .body(var discarder):
                let bodyStart = request.length
                let from = keepingBody ? bodyStart + keptScanned : bodyStart
                let result = input.withBytes { discarder.consume($0, from: from) }
                switch result {
                case .needMore:
                    if keepingBody { keptScanned = input.count - bodyStart } else { input.remove(bodyStart..<input.count) }
                    phase = .body(discarder)
                    return nil
                case .done(let end):
                    if keepingBody { keptLength = end - bodyStart } else { input.remove(bodyStart..<end) }
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
    private mutating func startBody() {
        // A client that sent Expect: 100-continue waits for this before sending the body; an HTTP/1.0
        // client does not know the interim answer, and one already sending needs none.
        if request.expectsContinue && !request.isHTTP10 && input.count == request.length {
            output.append(PreparedResponse.continueInterim, date: nil, connection: .none, includeBody: false)
        }
        phase = .body(BodyDiscarder(request.body, limit: settings.limits.bodyBytes))
        if keepsBodies, case .length = request.body { keepingBody = true }
        keptScanned = 0
        keptLength = 0
        clocks.bodyStartedAt = clock.now
    }

    /// Queues the answer to a request that cannot be served, and closes after it: the framing of
    /// whatever follows is in doubt (RFC 9112 §2.2).
    private mutating func reject(_ error: HTTPError) -> Action {
        let bytes = output.append(ErrorResponses.response(for: error), date: clock.dateLine, connection: .close, includeBody: true)
        requests += 1
        closeAfterWrite = true
        phase = .head
        return .rejected(error, bytes: bytes)
    }
}
