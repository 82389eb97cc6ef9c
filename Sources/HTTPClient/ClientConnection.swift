public import HTTP1
import Posix
public import TLS

/// One connected socket to a server, plain or TLS, every step bounded by one deadline: what both of the
/// project's HTTP clients are made of — `check`, which reports each step's failure in its own words, and
/// ``HTTPClient``, the server's outgoing requests (ACME, the on-demand ask URL). Blocking; never used on
/// an event loop.
public final class ClientConnection {
    public let fd: Int32
    public private(set) var session: TLSSession?
    /// Monotonic milliseconds by which every step must be done.
    public let deadline: Int64

    /// Takes over a connected socket (closed when the connection is released).
    public init(fd: Int32, deadline: Int64) {
        self.fd = fd
        self.deadline = deadline
    }

    deinit { Posix.close(fd) }

    public var remainingMilliseconds: Int32 { Int32(clamping: max(0, deadline - Posix.monotonicMilliseconds())) }

    /// Waits for `readiness` within the deadline; false when it ran out.
    func wait(_ readiness: Readiness) -> Bool {
        Posix.wait(fd, for: readiness, timeoutMilliseconds: remainingMilliseconds) && remainingMilliseconds > 0
    }

    public enum HandshakeOutcome {
        case done(TLSSession)
        case couldNotStart
        case timedOut
        /// The server closed the connection during the handshake.
        case closed
        case failed(TLSFailure)
    }

    /// The TLS handshake, sending `serverName` as SNI (and checking the certificate against it).
    public func startTLS(_ context: TLSClientContext, serverName: String) -> HandshakeOutcome {
        guard let created = context.session(fd: fd, serverName: serverName) else { return .couldNotStart }
        while true {
            switch created.handshake() {
            case .done:
                session = created
                return .done(created)
            case .wouldBlock(let readiness):
                guard wait(readiness) else { return .timedOut }
            // A client's session has no client hello callback to suspend it.
            case .closed, .waitingForCertificate: return .closed
            case .failed(let failure): return .failed(failure)
            }
        }
    }

    public enum SendOutcome {
        case sent
        case timedOut
        case closed
    }

    public func send(_ bytes: [UInt8]) -> SendOutcome {
        var sent = 0
        while sent < bytes.count {
            switch bytes[sent...].withUnsafeBytes({ session?.write($0) ?? Posix.write(fd, $0) }) {
            case .bytes(let count): sent += count
            case .wouldBlock(let readiness):
                guard wait(readiness) else { return .timedOut }
            case .closed, .failed: return .closed
            }
        }
        return .sent
    }

    public enum ReceiveOutcome {
        case response(ParsedResponse)
        case malformed(String)
        /// The deadline ran out with `received` bytes of the response in.
        case timedOut(received: Int)
        /// The server closed the connection before the response was complete.
        case closedEarly
    }

    /// Reads until a whole response is in (or the server closes the connection after it).
    public func receive(isHEAD: Bool, bodyLimit: Int = 16 << 20) -> ReceiveOutcome {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        /// The response the bytes so far make, or why they cannot make one; nil while incomplete.
        func parsed(closed: Bool) -> ReceiveOutcome? {
            switch ResponseParser.parse(received, closed: closed, isHEAD: isHEAD, bodyLimit: bodyLimit) {
            case .complete(let response, _): return .response(response)
            case .failed(let error): return .malformed(error.message)
            case .incomplete: return nil
            }
        }
        while true {
            if let outcome = parsed(closed: false) { return outcome }
            switch buffer.withUnsafeMutableBytes({ session?.read(into: $0) ?? Posix.read(fd, into: $0) }) {
            case .bytes(let count): received += buffer[0..<count]
            case .wouldBlock(let readiness):
                guard wait(readiness) else { return .timedOut(received: received.count) }
            case .closed, .failed: return parsed(closed: true) ?? .closedEarly
            }
        }
    }
}
