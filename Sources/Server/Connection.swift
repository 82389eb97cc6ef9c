import HTTP1
import TLS

/// One client connection, owned by one event loop.
final class Connection {
    enum Phase {
        case proxyHeader
        case head
        case body(BodyDiscarder)
        /// Response sent and write side shut; reading what the client still sends so it gets our
        /// answer rather than a reset, until it closes or the linger deadline passes.
        case lingering
    }

    let fd: Int32
    let slot: Int
    let isAdmin: Bool
    var peer: String
    var phase: Phase
    var input: [UInt8] = []
    var parser: RequestHeadParser
    var output: [UInt8] = []
    var outputOffset = 0
    var closeAfterWrite = false
    var peerClosed = false
    var requests = 0
    /// When the current request head must be complete (10 s from accept, or from its first byte).
    var headerDeadline: Int64
    /// When the connection went idle between requests (nil while a request is in progress).
    var idleSince: Int64?
    var writeDeadline: Int64?
    var lingerDeadline: Int64?
    var wantsWrite = false
    /// Added to the loop's epoll set (a connection answered by the optimistic first read never is).
    var registered = false
    var noDelay = false
    /// Reading stopped until the pending output drains.
    var pausedForBackpressure = false
    /// HTTPS: the TLS session over `fd` (nil on plain listeners).
    var tls: TLSSession?
    /// The TLS handshake is waiting for the socket to become writable.
    var tlsWantsWrite = false
    var readingEnabled = true
    var requestStartMicros: Int64 = 0
    let acceptedAt: Int64
    /// Distinguishes this connection from a later one that reuses its slot (admin reload answers).
    var serial = 0
    /// A `POST /reload` is being carried out; its answer, then the rest of the input, follow.
    var awaitingAdminReload: (close: Bool, keepAliveHeader: Bool, isHead: Bool)?

    init(fd: Int32, slot: Int, peer: String, isAdmin: Bool, proxyProtocol: Bool, limits: HTTPLimits, now: Int64, headerTimeout: Int64) {
        self.fd = fd
        self.slot = slot
        self.peer = peer
        self.isAdmin = isAdmin
        phase = proxyProtocol ? .proxyHeader : .head
        parser = RequestHeadParser(limits: limits)
        headerDeadline = now + headerTimeout
        acceptedAt = now
    }

    /// Waiting for the next request with nothing buffered: the state eviction and idle timeouts target.
    var isIdle: Bool {
        guard case .head = phase else { return false }
        return input.isEmpty && output.count == outputOffset && requests > 0
    }

    var hasPendingOutput: Bool { outputOffset < output.count }
}
