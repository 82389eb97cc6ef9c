extension ConnectionStateMachine {
    /// Which limit a timed-out connection ran into.
    enum TimeoutKind: String, Equatable, Sendable {
        case header, body, keepalive, write
    }

    enum DeadlineKind: Equatable {
        case timeout(TimeoutKind)
        case linger
    }

    /// When each stage of the connection started, in the loop clock's microseconds (the deadlines
    /// follow from them and the phase: ``currentDeadline``).
    struct Clocks {
        var headerStartedAt: Int64
        var bodyStartedAt: Int64 = 0
        private(set) var idleSince: Int64?
        var writeStalledSince: Int64?
        var lingerStartedAt: Int64 = 0
        /// When the first byte of the current request arrived (access-log durations).
        private(set) var requestStartedAt: Int64?

        init(headerStartedAt: Int64) { self.headerStartedAt = headerStartedAt }

        /// The first bytes of a request arrived into an empty buffer. After an idle wait they start its
        /// header clock (later bytes do not reset it).
        mutating func requestBytesArrived(at now: Int64) {
            if idleSince != nil {
                idleSince = nil
                headerStartedAt = now
            }
            if requestStartedAt == nil { requestStartedAt = now }
        }

        /// The request was answered and nothing more is buffered: idle from now (unless closing).
        mutating func requestAnswered(at now: Int64, idle: Bool) {
            requestStartedAt = nil
            if idle { idleSince = now }
        }

        /// The next pipelined request is already here: its clocks start now.
        mutating func pipelinedRequestStarts(at now: Int64) {
            headerStartedAt = now
            requestStartedAt = now
        }
    }

    /// The deadline in force: lingering, a stalled write, the body, an idle keep-alive, or the header
    /// (which covers the PROXY header and the handshake). Nil while an answer is being made, or after
    /// the last answer when closing.
    var currentDeadline: (at: Int64, kind: DeadlineKind)? {
        if case .lingering = phase { return (clocks.lingerStartedAt + settings.lingerTimeout, .linger) }
        if hasPendingOutput {
            return clocks.writeStalledSince.map { ($0 + settings.writeTimeout, .timeout(.write)) }
        }
        if closeAfterWrite { return nil }
        switch phase {
        case .answering, .awaitingAnswer, .closed, .lingering:
            return nil
        case .body:
            return (clocks.bodyStartedAt + settings.bodyTimeout, .timeout(.body))
        case .head where input.isEmpty && clocks.idleSince != nil:
            return (clocks.idleSince! + settings.keepAliveTimeout, .timeout(.keepalive))
        case .head, .proxyHeader, .handshake:
            return (clocks.headerStartedAt + settings.headerTimeout, .timeout(.header))
        }
    }

    /// How eviction sees this connection: idle ones go first, then those still sending a request (header
    /// or body) — oldest first in each group. Nil for connections being answered, which are never evicted.
    var evictionRank: (group: Int, since: Int64)? {
        guard !hasPendingOutput, !closeAfterWrite else { return nil }
        switch phase {
        case .head:
            if let idleSince = clocks.idleSince, input.isEmpty, requests > 0 { return (0, idleSince) }
            return (1, clocks.headerStartedAt)
        case .proxyHeader, .handshake: return (1, clocks.headerStartedAt)
        case .body: return (1, clocks.bodyStartedAt)
        case .answering, .awaitingAnswer, .lingering, .closed: return nil
        }
    }
}
