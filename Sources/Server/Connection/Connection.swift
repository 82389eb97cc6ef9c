import Posix

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
    /// TLS: the session keeps its record buffers between requests (``TLSBufferKeeping``).
    var keepsTLSBuffers = false

    /// The request bytes not yet consumed. While they are where they were read (the usual case), only
    /// their place is read: the input's copy would retain and release its array, twice a request.
    @inline(__always)
    func withRequestBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let bytes = machine.input.inPlace { return body(bytes) }
        return machine.input.withBytes(body)
    }

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
