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
        // A TLS-ALPN-01 validation ends with its handshake (RFC 8737 §3): no request follows.
        case .done: return session.answeredACMEChallenge ? .closed : .done
        case .wouldBlock(let readiness): return .wouldBlock(ConnectionStateMachine.Readiness(readiness))
        case .waitingForCertificate: return .waitingForCertificate
        case .failed(let failure): return .failed(failure.description)
        case .closed: return .closed
        }
    }

    /// The SNI of a TLS connection, for messages.
    var serverName: String? {
        guard case .tls(let session) = self else { return nil }
        return session.requestedServerName
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
