import HTTP1

extension ConnectionStateMachine {
    /// What the event loop carries out next; each says how to report its result.
    enum Action: Equatable {
        // A keep-alive request takes these four, in this order. Declared first: the cases without a payload
        // are numbered in declaration order and a switch over them tests them in that order.
        /// Read once; report with ``received(_:moreBuffered:)``, ``readBlocked(until:)``, ``readEnded()``
        /// or ``failed(_:)``.
        case read
        /// A complete request, ``request`` (body, if any, read and judged): route it, then call
        /// ``respond(_:)`` or ``respondWithReload()``. Its ranges index ``input``.
        case answer
        /// Write pending output once; report with ``wrote(_:)``, ``writeBlocked(until:)`` or ``failed(_:)``.
        case write
        /// Nothing to do until the next event.
        case wait
        /// Step the TLS handshake; report with ``handshakeStepped(_:)``.
        case stepHandshake
        /// TLS listener with the PROXY protocol: copy what is waiting without consuming it (OpenSSL must
        /// not see the header); report with ``peeked(_:)``.
        case peekProxyHeader
        /// Read and drop exactly this many bytes (the PROXY header just peeked); report with ``consumedRaw()``.
        case consumeRaw(Int)
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
        /// Register or change what the socket is watched for.
        case setInterest(Interest)
        /// Everything is answered but the client is still sending: shut our side, keep reading until it closes.
        case shutdownWrite
        /// Close gracefully (TLS: close_notify first).
        case close
        /// Close at once with a reset; `reason` is logged when present.
        case abort(reason: String?)
    }

    /// What a TLS handshake step did (the transport's answer, without its types).
    enum HandshakeStep: Equatable {
        case done
        case wouldBlock(Readiness)
        /// Suspended until its certificate is ready: stepped again at the next tick or wake-up.
        case waitingForCertificate
        case failed(String)
        case closed
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
        /// The answer comes from another thread: a reload (the supervisor), a link API call (its worker).
        case awaitingAnswer
        /// Answered and write side shut: reading (and dropping) until the client closes or the linger ends.
        case lingering
        case closed
    }
}
