/// What a socket (or a TLS session over one) must become before a blocked operation can go on.
public enum Readiness: Sendable, Equatable {
    case readable
    case writable
}

/// The outcome of one non-blocking read or write, plain or TLS.
public enum IOResult: Sendable, Equatable {
    case bytes(Int)
    /// Nothing moved; retry once the socket has this readiness (TLS may read to write, and write to read).
    case wouldBlock(Readiness)
    /// The peer closed (end of stream, or TLS close_notify).
    case closed
    case failed(String)
}

extension IOResult {
    public var isWouldBlock: Bool {
        if case .wouldBlock = self { return true }
        return false
    }
}
