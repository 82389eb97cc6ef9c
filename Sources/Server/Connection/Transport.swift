import Posix
import TLS

/// How bytes move on one connection: straight on the socket, or through a TLS session over it.
enum Transport {
    case plain
    case tls(TLSSession)

    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        switch self {
        case .plain: return Posix.read(fd, into: buffer)
        case .tls(let session): return session.read(into: buffer)
        }
    }

    /// TLS only; a plain transport has nothing to negotiate.
    func handshake() -> ConnectionStateMachine.HandshakeStep {
        guard case .tls(let session) = self else { return .done }
        switch session.handshake() {
        case .done: return .done
        case .wouldBlock(let readiness): return .wouldBlock(ConnectionStateMachine.Readiness(readiness))
        case .failed(let failure): return .failed(failure.description)
        case .closed: return .closed
        }
    }

    /// Decrypted bytes waiting in the TLS session, which no socket event will announce.
    var hasBufferedInput: Bool {
        guard case .tls(let session) = self else { return false }
        return session.hasBufferedInput
    }

    func close(_ fd: Int32) {
        if case .tls(let session) = self, session.handshakeDone { session.shutdown() }
        Posix.close(fd)
    }
}

extension ConnectionStateMachine.Readiness {
    init(_ readiness: Readiness) {
        switch readiness {
        case .readable: self = .readable
        case .writable: self = .writable
        }
    }
}

/// One client connection as its event loop holds it: the socket, how bytes move on it, and its
/// protocol state. Only the owning loop's thread touches it.
final class Connection {
    let fd: Int32
    let slot: Int
    /// Distinguishes this connection from a later one in the same slot (reload answers arrive late).
    let serial: Int
    let listener: ListenerRole
    /// The socket's peer address.
    let peer: SocketAddress
    let transport: Transport
    var machine: ConnectionStateMachine
    /// Added to the loop's epoll set (a connection answered by its first, optimistic read never is).
    var registered = false
    /// TLS: the length of a write that would have blocked, which must be retried with the same bytes.
    var tlsRetryLength: Int?

    init(
        fd: Int32,
        slot: Int,
        serial: Int,
        listener: ListenerRole,
        peer: SocketAddress,
        transport: Transport,
        machine: ConnectionStateMachine
    ) {
        self.fd = fd
        self.slot = slot
        self.serial = serial
        self.listener = listener
        self.peer = peer
        self.transport = transport
        self.machine = machine
    }

    /// The client as logged: the PROXY header's address when there was one.
    var clientAddress: String { machine.proxiedClient ?? peer.description }
}
